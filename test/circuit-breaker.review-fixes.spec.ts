import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { defer, firstValueFrom, Observable, of, throwError } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Breaker, CallTimeoutError, CircuitBreaker, circuitBreaker, CircuitBreakerModule, CircuitBreakerRegistry, type CircuitBreakerModuleOptions } from '../lib/index.js';
import { mergeOptions } from '../lib/circuit-breaker.options.js';
import { ManualClock } from './helpers/manual-clock.js';

const apps: INestApplication[] = [];
afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

async function start(options: CircuitBreakerModuleOptions, providers: unknown[] = [], imports: unknown[] = []) {
  const moduleRef = await Test.createTestingModule({ imports: [CircuitBreakerModule.forRoot(options), ...(imports as never[])], providers: providers as never[] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  apps.push(app);
  await app.init();
  return app;
}

const down = () => Object.assign(new Error('down'), { status: 503 });

describe('Nest layer rules found in review', () => {
  it('serves the last good value of an Observable method', async () => {
    @Injectable()
    class Quotes {
      up = true;
      @CircuitBreaker({ fallback: { lastGood: { maxAgeMs: 1_000 } } })
      quote(symbol: string): Observable<number> {
        return defer(() => (this.up ? of(symbol.length * 10) : throwError(down)));
      }
    }
    const app = await start({}, [Quotes]);
    const quotes = app.get(Quotes);
    expect(await firstValueFrom(quotes.quote('ACME'))).toBe(40);
    quotes.up = false;
    expect(await firstValueFrom(quotes.quote('ACME'))).toBe(40);
    await expect(firstValueFrom(quotes.quote('NEW'))).rejects.toThrow('down');
  });

  it('arguments JSON cannot hold are served and counted as usual, only not cached', async () => {
    @Injectable()
    class Circular {
      @CircuitBreaker({ fallback: { lastGood: { maxAgeMs: 1_000 } } })
      async read(request: object): Promise<string> {
        return `read ${Object.keys(request).length}`;
      }
    }
    const app = await start({}, [Circular]);
    const request: Record<string, unknown> = { a: 1 };
    request.self = request;
    expect(await app.get(Circular).read(request)).toBe('read 2');
    expect(app.get(CircuitBreakerRegistry).get('Circular.read').snapshot().totals.successes).toBe(1);
  });

  it('an operator probe that the breaker gives up on ends its subscription with the expiry error', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('op-probe', { consecutiveFailures: 1, openDurationMs: 10, halfOpen: { maxWaitMs: 100 } }, { clock });
    await breaker.execute(() => Promise.reject(new Error('x'))).catch(() => undefined);
    clock.advance(10);
    let unsubscribed = false;
    let error: unknown;
    new Observable<never>(() => () => (unsubscribed = true)).pipe(circuitBreaker(breaker)).subscribe({ error: (e: unknown) => (error = e) });
    clock.advance(100);
    expect(breaker.state).toBe('open');
    expect(error).toBeInstanceOf(CallTimeoutError);
    expect(unsubscribed).toBe(true);
  });

  it('two forFeature() calls giving options for one name conflict at start-up', async () => {
    @Module({ imports: [CircuitBreakerModule.forFeature({ shared: { timeoutMs: 100 } })] })
    class A {}
    @Module({ imports: [CircuitBreakerModule.forFeature({ shared: { consecutiveFailures: 2 } })] })
    class B {}
    await expect(start({}, [], [A, B])).rejects.toThrow(
      'Circuit breaker "shared" has options set in two places: CircuitBreakerModule.forFeature() and CircuitBreakerModule.forFeature().',
    );
  });

  it('nested options that are not objects are kept for validation to reject, even over defaults', async () => {
    expect(mergeOptions({ halfOpen: { maxProbes: 2 } }, { halfOpen: 5 as never })).toEqual({ halfOpen: 5 });
    await expect(start({ defaults: { halfOpen: { maxProbes: 2 } }, breakers: { a: { halfOpen: 5 as never } } })).rejects.toThrow(
      'Circuit breaker "a" in CircuitBreakerModule: option "breakers.a.halfOpen" must be an object, got 5.',
    );
    await expect(start({ breakers: { a: null as never } })).rejects.toThrow('Circuit breaker "a" in CircuitBreakerModule: option "breakers.a" must be an object, got null. Leave the option out (or undefined) to use its default.');
  });
});
