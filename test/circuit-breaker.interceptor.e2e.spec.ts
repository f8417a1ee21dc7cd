import {
  Controller,
  Get,
  Headers,
  NotFoundException,
  Param,
  ServiceUnavailableException,
  type ExecutionContext,
} from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { of } from 'rxjs';
import { APP_INTERCEPTOR } from '@nestjs/core';
import {
  CircuitBreakerInterceptor,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  UseCircuitBreaker,
} from '../lib/index.js';
import { HTTP_PLATFORMS, platformApps } from './helpers/http-platforms.js';
import { ManualClock } from './helpers/manual-clock.js';
import { nestApps } from './helpers/nest-app.js';

/** How each upstream answers, set by the test; and how often the handlers ran. */
const upstream = { down: new Set<string>(), calls: 0 };

const tenantOf = (context: ExecutionContext) =>
  context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-tenant']!;

@Controller()
class QuotesController {
  @Get('quote/:id')
  @UseCircuitBreaker('quotes')
  async quote(@Param('id') id: string) {
    upstream.calls++;
    if (id === 'missing') throw new NotFoundException('no such quote');
    if (upstream.down.has('quotes')) throw new ServiceUnavailableException('quotes are down');
    return { id, price: 42 };
  }

  @Get('tenant')
  @UseCircuitBreaker('tenants', { key: tenantOf })
  async tenant(@Headers('x-tenant') tenant: string) {
    upstream.calls++;
    if (upstream.down.has(tenant)) throw new ServiceUnavailableException(`${tenant} is down`);
    return { tenant };
  }

  @Get('cached')
  @UseCircuitBreaker('cached', {
    fallback: (error, context) =>
      of({
        cached: true,
        path: context.switchToHttp().getRequest<{ url: string }>().url,
        because: (error as Error).name,
      }),
  })
  cached() {
    upstream.calls++;
    throw new ServiceUnavailableException('down');
  }

  @Get('cached-value')
  @UseCircuitBreaker('cachedValue', { fallback: () => ({ cached: 'value' }) })
  cachedValue() {
    upstream.calls++;
    throw new ServiceUnavailableException('down');
  }

  @Get('cached-promise')
  @UseCircuitBreaker('cachedPromise', { fallback: async () => ({ cached: 'promise' }) })
  cachedPromise() {
    upstream.calls++;
    throw new ServiceUnavailableException('down');
  }

  @Get('hang')
  @UseCircuitBreaker('slow')
  hang() {
    upstream.calls++;
    return new Promise(() => undefined);
  }
}

const failFast = { consecutiveFailures: 2, openDurationMs: 5_000, timeoutMs: false as const };

describe.each(HTTP_PLATFORMS)('@UseCircuitBreaker() on %s', (platform) => {
  const start = platformApps(platform);

  async function started() {
    upstream.down.clear();
    upstream.calls = 0;
    const clock = new ManualClock();
    const { app, url } = await start(
      [
        CircuitBreakerModule.forRoot({
          clock,
          httpFilter: true,
          breakers: {
            quotes: failFast,
            tenants: { ...failFast, perKey: { maxKeys: 100 } },
            cached: failFast,
            cachedValue: failFast,
            cachedPromise: failFast,
            slow: { timeoutMs: 50 },
          },
        }),
      ],
      { controllers: [QuotesController] },
    );
    return { url, clock, registry: app.get(CircuitBreakerRegistry) };
  }

  it("counts each handling as one call, and a 404 as the dependency's valid answer", async () => {
    const { url, registry } = await started();
    expect(await (await fetch(`${url}/quote/1`)).json()).toEqual({ id: '1', price: 42 });
    expect((await fetch(`${url}/quote/missing`)).status).toBe(404);
    expect(registry.get('quotes').snapshot().totals).toMatchObject({
      admitted: 2,
      successes: 2,
      failures: { total: 0 },
    });
  });

  it('opens after the failures, then rejects without running the handler: 503 and Retry-After', async () => {
    const { url, clock, registry } = await started();
    upstream.down.add('quotes');
    expect((await fetch(`${url}/quote/1`)).status).toBe(503);
    expect((await fetch(`${url}/quote/1`)).status).toBe(503);
    expect(registry.get('quotes').lastDecidedState).toBe('open');
    clock.advance(2_000);
    const calls = upstream.calls;
    const rejected = await fetch(`${url}/quote/1`);
    expect([rejected.status, rejected.headers.get('retry-after')]).toEqual([503, '3']);
    expect(await rejected.json()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'A dependency is unavailable; retry later.',
    });
    expect(upstream.calls).toBe(calls);
    // The probe after the open period is a real call: it closes the breaker.
    upstream.down.clear();
    clock.advance(3_000);
    expect((await fetch(`${url}/quote/1`)).status).toBe(200);
    expect(registry.get('quotes').state).toBe('closed');
  });

  it('gives each tenant its own child breaker, keyed from the request', async () => {
    const { url, registry } = await started();
    upstream.down.add('acme');
    const as = (tenant: string) => fetch(`${url}/tenant`, { headers: { 'x-tenant': tenant } });
    for (let i = 0; i < 3; i++) await as('acme');
    expect(registry.get('tenants').forKey('acme').lastDecidedState).toBe('open');
    expect((await as('globex')).status).toBe(200);
    const calls = upstream.calls;
    expect((await as('acme')).status).toBe(503);
    expect(upstream.calls).toBe(calls);
  });

  it('serves the fallback, given the error and the context, and counts it', async () => {
    const { url, registry } = await started();
    const response = await fetch(`${url}/cached`);
    expect([response.status, await response.json()]).toEqual([
      200,
      { cached: true, path: '/cached', because: 'ServiceUnavailableException' },
    ]);
    await fetch(`${url}/cached`);
    const rejected = await (await fetch(`${url}/cached`)).json();
    expect(rejected).toEqual({ cached: true, path: '/cached', because: 'CallRejectedError' });
    expect(registry.get('cached').snapshot().totals.fallbacks).toBe(3);
  });

  it('serves a fallback that answers with a plain value or a Promise', async () => {
    const { url, registry } = await started();
    for (let i = 0; i < 3; i++) {
      const value = await fetch(`${url}/cached-value`);
      const promised = await fetch(`${url}/cached-promise`);
      expect([value.status, await value.json(), promised.status, await promised.json()]).toEqual([
        200,
        { cached: 'value' },
        200,
        { cached: 'promise' },
      ]);
    }
    // The third of each was rejected by the open breaker, and served all the same.
    expect([
      registry.get('cachedValue').snapshot().totals.fallbacks,
      registry.get('cachedPromise').snapshot().totals.fallbacks,
      registry.get('cachedValue').lastDecidedState,
    ]).toEqual([3, 3, 'open']);
  });

  it("ends a handler past the breaker's deadline with 504", async () => {
    const { url, registry } = await started();
    const response = await fetch(`${url}/hang`);
    expect([response.status, (await response.json()).statusCode]).toEqual([504, 504]);
    expect(registry.get('slow').snapshot().totals.timeouts).toBe(1);
  });
});

describe('@UseCircuitBreaker() at start-up', () => {
  const start = nestApps();

  it('asks for a key on a per-key breaker', async () => {
    @Controller()
    class NoKeyController {
      @Get()
      @UseCircuitBreaker('tenants')
      get() {}
    }
    await expect(
      start([CircuitBreakerModule.forRoot({ breakers: { tenants: { perKey: {} } } })], {
        controllers: [NoKeyController],
      }),
    ).rejects.toThrow(
      'Circuit breaker "tenants" is per-key (perKey), but @UseCircuitBreaker() on NoKeyController.get gives no key.',
    );
  });

  it('refuses a second @UseCircuitBreaker() on one method, where the class is declared', () => {
    expect(() => {
      class Twice {
        @UseCircuitBreaker('quotes')
        @UseCircuitBreaker('tenants', { key: () => 'x' })
        get() {}
      }
      return Twice;
    }).toThrow(
      '@UseCircuitBreaker() on Twice.get is given twice ("quotes" over "tenants"): a handling is one call of one breaker. Keep one, or call the other breaker inside the handler.',
    );
  });

  it('refuses bad options where the class is declared', () => {
    expect(() => {
      class BadFallback {
        @UseCircuitBreaker('quotes', { fallback: 'cached' as never })
        get() {}
      }
      return BadFallback;
    }).toThrow('@UseCircuitBreaker() on BadFallback.get: option "fallback"');
    expect(() => {
      class Typo {
        @UseCircuitBreaker('quotes', { keys: () => 'x' } as never)
        get() {}
      }
      return Typo;
    }).toThrow('"keys"');
  });
});

describe('@UseCircuitBreaker() on a class and on one of its methods', () => {
  const start = nestApps();

  @Controller()
  @UseCircuitBreaker('catalog')
  class CatalogController {
    @Get('own')
    @UseCircuitBreaker('quotes')
    own() {
      upstream.calls++;
      return { own: true };
    }

    @Get('inherited')
    inherited() {
      upstream.calls++;
      return { inherited: true };
    }
  }

  async function started() {
    upstream.calls = 0;
    const clock = new ManualClock();
    const app = await start(
      [
        CircuitBreakerModule.forRoot({
          clock,
          httpFilter: true,
          breakers: {
            catalog: failFast,
            quotes: { ...failFast, halfOpen: { maxProbes: 1, successesToClose: 1 } },
          },
        }),
      ],
      { controllers: [CatalogController] },
    );
    await app.listen(0, '127.0.0.1');
    return { url: await app.getUrl(), clock, registry: app.get(CircuitBreakerRegistry) };
  }

  it("counts a handling once, on the method's breaker only (the class binding steps aside)", async () => {
    const { url, registry } = await started();
    expect(await (await fetch(`${url}/own`)).json()).toEqual({ own: true });
    expect(await (await fetch(`${url}/inherited`)).json()).toEqual({ inherited: true });
    expect([
      registry.get('quotes').snapshot().totals.admitted,
      registry.get('catalog').snapshot().totals.admitted,
      upstream.calls,
    ]).toEqual([1, 1, 2]);
  });

  it('counts a handling once with the interceptor also bound globally', async () => {
    upstream.calls = 0;
    const app = await start(
      [CircuitBreakerModule.forRoot({ breakers: { catalog: {}, quotes: {} } })],
      {
        controllers: [CatalogController],
        providers: [{ provide: APP_INTERCEPTOR, useClass: CircuitBreakerInterceptor }],
      },
    );
    await app.listen(0, '127.0.0.1');
    const url = await app.getUrl();
    const registry = app.get(CircuitBreakerRegistry);
    expect((await fetch(`${url}/own`)).status).toBe(200);
    expect([
      registry.get('quotes').snapshot().totals.admitted,
      registry.get('catalog').snapshot().totals.admitted,
    ]).toEqual([1, 0]);
  });

  it('lets the one probe of a half-open breaker through, and closes it', async () => {
    const { url, clock, registry } = await started();
    const quotes = registry.get('quotes');
    // Open by its own evidence: two failures.
    for (let i = 0; i < 2; i++)
      await quotes.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    expect(quotes.lastDecidedState).toBe('open');
    clock.advance(5_000);
    const probe = await fetch(`${url}/own`);
    expect([probe.status, quotes.state]).toEqual([200, 'closed']);
  });
});
