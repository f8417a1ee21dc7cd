import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  type RetryEvent,
} from '../../lib/index.js';
import { nestApps } from '../helpers/nest-app.js';

const startApp = nestApps();
const down = () => Object.assign(new Error('upstream down'), { status: 503 });
// No wait between attempts: the engine's spec times the backoff on fake timers.
const NOW = { attempts: 3, backoff: { initialMs: 0, jitter: 0 }, budget: false as const };

@Injectable()
class Stock {
  calls = 0;
  failures = 2;

  @CircuitBreaker({ name: 'stock', timeoutMs: false, retry: NOW })
  async level(sku: string): Promise<string> {
    this.calls++;
    if (this.failures-- > 0) throw down();
    return `${sku}: 7`;
  }

  @CircuitBreaker({ name: 'stock.cached', retry: NOW, fallback: 'cached' })
  async cachedLevel(_sku: string): Promise<string> {
    this.calls++;
    throw down();
  }

  cached(error: unknown, sku: string): string {
    return `${sku}: cached after ${(error as Error).message}`;
  }

  @CircuitBreaker({ name: 'stock.once', fallback: 'cached' })
  async onceLevel(_sku: string): Promise<string> {
    this.calls++;
    throw down();
  }

  @CircuitBreaker({ name: 'stock.invalid', retry: NOW, consecutiveFailures: 1 })
  async badRequest(): Promise<string> {
    this.calls++;
    throw Object.assign(new Error('bad sku'), { status: 400 });
  }
}

/** Each call waits for the test to fail it: an attempt stays in flight while the test reconfigures. */
@Injectable()
class Gated {
  readonly pending: ((error: unknown) => void)[] = [];

  @CircuitBreaker({ name: 'gated', timeoutMs: false, retry: NOW, fallback: 'cached' })
  async level(_sku: string): Promise<string> {
    return new Promise((_, reject) => this.pending.push(reject));
  }

  cached(error: unknown, sku: string): string {
    return `${sku}: cached after ${(error as Error).message}`;
  }
}

describe('@CircuitBreaker({ retry })', () => {
  it('retries a Promise method through its breaker, each attempt one call, and counts the retries', async () => {
    const app = await startApp([CircuitBreakerModule.forRoot()], { providers: [Stock] });
    const stock = app.get(Stock);
    const breaker = app.get(CircuitBreakerRegistry).get('stock');
    const events: RetryEvent[] = [];
    breaker.on('retry', (event) => events.push(event));
    expect(await stock.level('sku-1')).toBe('sku-1: 7');
    expect(stock.calls).toBe(3);
    expect(events.map((e) => [e.attempt, e.result])).toEqual([
      [2, 'scheduled'],
      [3, 'scheduled'],
    ]);
    expect(breaker.snapshot().totals).toMatchObject({
      admitted: 3,
      successes: 1,
      failures: { total: 2 },
      retries: { attempted: 2, denied: 0 },
    });
  });

  it('answers with the fallback once the attempts are spent, and never retries a 400', async () => {
    const app = await startApp([CircuitBreakerModule.forRoot()], { providers: [Stock] });
    const stock = app.get(Stock);
    expect(await stock.cachedLevel('sku-2')).toBe('sku-2: cached after upstream down');
    expect(stock.calls).toBe(3);
    stock.calls = 0;
    await expect(stock.badRequest()).rejects.toThrow('bad sku');
    expect(stock.calls).toBe(1);
  });

  it('serves the fallback for the calls the breaker counted failed or refused, retry or not: none under force(disabled)', async () => {
    const app = await startApp([CircuitBreakerModule.forRoot()], { providers: [Stock] });
    const stock = app.get(Stock);
    const registry = app.get(CircuitBreakerRegistry);
    for (const name of ['stock.cached', 'stock.once'])
      registry.get(name).force('disabled', { reason: 'load test' });
    // Nothing is counted: the failure is the caller's, with retry as without.
    await expect(stock.onceLevel('sku-3')).rejects.toThrow('upstream down');
    await expect(stock.cachedLevel('sku-3')).rejects.toThrow('upstream down');
    expect(stock.calls).toBe(4);
    expect(registry.get('stock.cached').snapshot().totals).toMatchObject({
      admitted: 0,
      failures: { total: 0 },
    });
    // Forced open, both are refused: the fallback answers.
    for (const name of ['stock.cached', 'stock.once'])
      registry.get(name).force('open', { reason: 'maintenance' });
    expect(await stock.cachedLevel('sku-4')).toMatch(/^sku-4: cached after /);
    expect(await stock.onceLevel('sku-4')).toMatch(/^sku-4: cached after /);
    expect(stock.calls).toBe(4);
  });

  it('retries an attempt, and serves the fallback, as the options it was admitted under say', async () => {
    const app = await startApp([CircuitBreakerModule.forRoot()], { providers: [Gated] });
    const gated = app.get(Gated);
    const breaker = app.get(CircuitBreakerRegistry).get('gated');
    // The backoff is 0 ms: a retry waits for one turn of the timers.
    const flush = async () => {
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 2));
    };
    const call = gated.level('sku-5');
    await flush();
    // Admitted while a 503 is a failure; it fails after the classifier was changed to ignore it.
    breaker.reconfigure({ timeoutMs: false, classify: () => 'ignored' });
    gated.pending[0]!(down());
    await flush();
    // Retried, as a failure is; the retry, admitted under the new options, fails ignored: no fallback.
    expect(gated.pending).toHaveLength(2);
    gated.pending[1]!(down());
    await expect(call).rejects.toThrow('upstream down');
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 2, failures: { total: 1 } });
    // The other way round: admitted while ignored, failing once failures count again, no retry and no fallback.
    const next = gated.level('sku-6');
    await flush();
    breaker.reconfigure({ timeoutMs: false });
    gated.pending[2]!(down());
    await expect(next).rejects.toThrow('upstream down');
    expect(gated.pending).toHaveLength(3);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 3, failures: { total: 1 } });
  });

  it('refuses retry on a method that cannot return a Promise, and checks the policy where the class is declared', () => {
    expect(() => {
      class Sync {
        @CircuitBreaker({ retry: { attempts: 2 } })
        level(): number {
          return 1;
        }
      }
      return Sync;
    }).toThrow(
      '@CircuitBreaker() on Sync.level: option "retry" only applies to a method that returns a Promise',
    );
    expect(() => {
      class Bad {
        @CircuitBreaker({ name: 'bad', retry: { attempts: 20 } })
        async level(): Promise<number> {
          return 1;
        }
      }
      return Bad;
    }).toThrow(
      'Circuit breaker "bad" in @CircuitBreaker() on Bad.level: option "retry.attempts" must be an integer in [1, 10], got 20.',
    );
  });
});
