import {
  Catch,
  Controller,
  Get,
  HttpException,
  Injectable,
  Param,
  type ArgumentsHost,
  type ExceptionFilter,
  type PipeTransform,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, HttpAdapterHost } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreakerGuard,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  isCallRejected,
  RequireCircuitBreaker,
} from '../lib/index.js';
import { HTTP_PLATFORMS, platformApps } from './helpers/http-platforms.js';
import { ManualClock } from './helpers/manual-clock.js';
import { nestApps } from './helpers/nest-app.js';

/** What ran behind the guard: the pipe and the handler. */
const ran: string[] = [];

@Injectable()
class CountingPipe implements PipeTransform {
  transform(value: unknown) {
    ran.push('pipe');
    return value;
  }
}

@Controller()
@RequireCircuitBreaker('inventory')
class FanOutController {
  @Get('fan-out/:id')
  @RequireCircuitBreaker('payments')
  fanOut(@Param('id', CountingPipe) id: string) {
    ran.push('handler');
    return { id };
  }

  @Get('stock')
  stock() {
    ran.push('handler');
    return { ok: true };
  }

  @Get('hosts/:host')
  @RequireCircuitBreaker({
    name: 'hosts',
    key: (context) => context.switchToHttp().getRequest<{ params: { host: string } }>().params.host,
  })
  host() {
    ran.push('handler');
    return { ok: true };
  }
}

@Controller()
class PlainController {
  @Get('plain')
  plain() {
    ran.push('handler');
    return { ok: true };
  }
}

const BREAKERS = {
  payments: { consecutiveFailures: 1, openDurationMs: 4_000, timeoutMs: false as const },
  inventory: { consecutiveFailures: 1, openDurationMs: 4_000, timeoutMs: false as const },
  hosts: {
    consecutiveFailures: 1,
    openDurationMs: 4_000,
    timeoutMs: false as const,
    perKey: { maxKeys: 10 },
  },
};

describe.each(HTTP_PLATFORMS)('@RequireCircuitBreaker() on %s', (platform) => {
  const start = platformApps(platform);

  async function started(httpFilter: boolean | { details: true } = false) {
    const clock = new ManualClock();
    const { app, url } = await start(
      [CircuitBreakerModule.forRoot({ clock, breakers: BREAKERS, httpFilter })],
      { controllers: [FanOutController], providers: [CountingPipe] },
    );
    ran.length = 0;
    const registry = app.get(CircuitBreakerRegistry);
    const open = (name: string) => registry.get(name).acquire().fail(new Error('down'));
    return { app, url, clock, registry, open };
  }

  it('lets the request through while every required breaker is closed, counting nothing', async () => {
    const { url, registry } = await started();
    const response = await fetch(`${url}/fan-out/7`);
    expect([response.status, await response.json()]).toEqual([200, { id: '7' }]);
    expect(ran).toEqual(['pipe', 'handler']);
    expect(registry.get('payments').snapshot().totals.admitted).toBe(0);
    expect(registry.get('inventory').snapshot().totals.admitted).toBe(0);
  });

  it('answers 503 with Retry-After before pipes and the handler when a breaker of the route is open', async () => {
    const { url, clock, registry, open } = await started();
    open('payments');
    clock.advance(1_500);
    const response = await fetch(`${url}/fan-out/7`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'A dependency is unavailable; retry later.',
    });
    expect(ran).toEqual([]);
    // The class's requirement applies to every route; the method's only to its own.
    expect((await fetch(`${url}/stock`)).status).toBe(200);
    open('inventory');
    expect((await fetch(`${url}/stock`)).status).toBe(503);
    expect(registry.get('payments').snapshot().totals.rejected.total).toBe(0);
  });

  it('shows the breaker and the wait with httpFilter: { details: true }, as the filter does', async () => {
    const { url, open } = await started({ details: true });
    open('inventory');
    const response = await fetch(`${url}/stock`);
    expect([response.status, response.headers.get('retry-after')]).toEqual([503, '4']);
    expect(await response.json()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'Circuit breaker "inventory" rejected the call: the circuit is open.',
      breaker: 'inventory',
      reason: 'open',
      retryAfterMs: 4_000,
    });
  });

  it('1,000 requests at half-open leave the probe for the call that needs it', async () => {
    const { url, clock, registry, open } = await started();
    open('payments');
    clock.advance(4_000);
    for (let batch = 0; batch < 10; batch++) {
      const statuses = await Promise.all(
        Array.from({ length: 100 }, () => fetch(`${url}/fan-out/1`).then((r) => r.status)),
      );
      expect(new Set(statuses)).toEqual(new Set([200]));
    }
    const payments = registry.get('payments');
    expect(payments.lastDecidedState).toBe('open');
    expect(payments.snapshot().halfOpen?.probesAdmitted).toBe(0);
    expect(payments.acquire().probe).toBe(true);
  });

  it('rejects while the probe budget is taken (half-open-busy), and lets the next probe through once it settles', async () => {
    const { url, clock, registry, open } = await started();
    open('payments');
    clock.advance(4_000);
    const payments = registry.get('payments');
    const probe = payments.acquire();
    expect([probe.probe, payments.state]).toEqual([true, 'half-open']);
    const busy = await fetch(`${url}/fan-out/1`);
    expect(busy.status).toBe(503);
    expect(ran).toEqual([]);
    probe.succeed(undefined);
    expect((await fetch(`${url}/fan-out/1`)).status).toBe(200);
    expect(payments.snapshot().totals.rejected.total).toBe(0);
  });

  it('checks the per-key child of the target, read from the request', async () => {
    const { url, registry } = await started();
    registry.get('hosts').forKey('a.example').acquire().fail(new Error('down'));
    expect((await fetch(`${url}/hosts/a.example`)).status).toBe(503);
    expect((await fetch(`${url}/hosts/b.example`)).status).toBe(200);
  });

  it('creates no child for a key it checks: a full family evicts nothing, an open child stays', async () => {
    const { url, registry } = await started();
    const hosts = registry.get('hosts');
    const open = hosts.forKey('a.example');
    open.acquire().fail(new Error('down'));
    for (const host of ['b.example', 'c.example', 'd.example'])
      expect((await fetch(`${url}/hosts/${host}`)).status).toBe(200);
    expect(hosts.snapshot().family).toMatchObject({ keys: 1, evicted: 0 });
    expect(hosts.forKey('a.example')).toBe(open);
    expect((await fetch(`${url}/hosts/a.example`)).status).toBe(503);
  });
});

describe('CircuitBreakerGuard.requiring() as a global guard', () => {
  const start = platformApps('express');

  it('guards every route of the application', async () => {
    const { app, url } = await start(
      [CircuitBreakerModule.forRoot({ breakers: { payments: BREAKERS.payments } })],
      {
        controllers: [PlainController],
        providers: [{ provide: APP_GUARD, useClass: CircuitBreakerGuard.requiring('payments') }],
      },
    );
    expect((await fetch(`${url}/plain`)).status).toBe(200);
    app.get(CircuitBreakerRegistry).get('payments').isolate();
    ran.length = 0;
    const response = await fetch(`${url}/plain`);
    // Isolated: no end to announce, so no Retry-After.
    expect([response.status, response.headers.get('retry-after')]).toEqual([503, null]);
    expect(ran).toEqual([]);
  });
});

describe('@RequireCircuitBreaker() given twice on one method', () => {
  const start = platformApps('express');

  @Controller()
  class StackedController {
    @Get('stacked')
    @RequireCircuitBreaker('payments')
    @RequireCircuitBreaker('inventory')
    stacked() {
      ran.push('handler');
      return { ok: true };
    }
  }

  it('requires every breaker either names', async () => {
    const { app, url } = await start([CircuitBreakerModule.forRoot({ breakers: BREAKERS })], {
      controllers: [StackedController],
    });
    const registry = app.get(CircuitBreakerRegistry);
    expect((await fetch(`${url}/stacked`)).status).toBe(200);
    for (const name of ['inventory', 'payments']) {
      registry.get(name).isolate();
      ran.length = 0;
      expect([name, (await fetch(`${url}/stacked`)).status, ran]).toEqual([name, 503, []]);
      registry.get(name).reset();
    }
  });
});

/** An application's own filter of HttpExceptions, which finds the breaker's rejection as the exception's cause. */
@Catch(HttpException)
class CauseFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}
  catch(exception: HttpException, host: ArgumentsHost) {
    const cause = exception.cause;
    this.adapterHost.httpAdapter.reply(
      host.switchToHttp().getResponse(),
      {
        status: exception.getStatus(),
        rejection: isCallRejected(cause),
        breaker: isCallRejected(cause) ? cause.breakerName : undefined,
        // A local rejection points at no failing code: the guard captures no stack for it.
        frames: exception.stack?.split('\n').length,
      },
      exception.getStatus(),
    );
  }
}

describe("@RequireCircuitBreaker() under an application's own HttpException filter", () => {
  const start = platformApps('express');

  it("gives the filter the CallRejectedError as the exception's cause", async () => {
    const { app, url } = await start(
      [CircuitBreakerModule.forRoot({ breakers: { payments: BREAKERS.payments } })],
      {
        controllers: [PlainController],
        providers: [
          { provide: APP_GUARD, useClass: CircuitBreakerGuard.requiring('payments') },
          { provide: APP_FILTER, useClass: CauseFilter },
        ],
      },
    );
    app.get(CircuitBreakerRegistry).get('payments').isolate();
    const response = await fetch(`${url}/plain`);
    expect([response.status, await response.json()]).toEqual([
      503,
      { status: 503, rejection: true, breaker: 'payments', frames: 1 },
    ]);
  });
});

describe('@RequireCircuitBreaker() at start-up', () => {
  const start = nestApps();

  it('refuses an unknown name under strict, naming the route and the nearest name', async () => {
    @Controller()
    class TypoController {
      @Get()
      @RequireCircuitBreaker('paymnts')
      get() {}
    }
    await expect(
      start([CircuitBreakerModule.forRoot({ strict: true, breakers: { payments: {} } })], {
        controllers: [TypoController],
      }),
    ).rejects.toThrow(
      'Circuit breaker "paymnts" used by @RequireCircuitBreaker() on TypoController.get is not defined, and CircuitBreakerModule is strict. Did you mean "payments"?',
    );
  });

  it('refuses a key for a breaker that is not per-key', async () => {
    @Controller()
    @RequireCircuitBreaker({ name: 'payments', key: () => 'x' })
    class KeyedController {
      @Get()
      get() {}
    }
    await expect(
      start([CircuitBreakerModule.forRoot({ breakers: { payments: {} } })], {
        controllers: [KeyedController],
      }),
    ).rejects.toThrow(
      '@RequireCircuitBreaker() on KeyedController gives a key, but circuit breaker "payments" is not per-key.',
    );
  });

  it('checks the names of CircuitBreakerGuard.requiring() too', async () => {
    await expect(
      start([CircuitBreakerModule.forRoot({ strict: true, breakers: { payments: {} } })], {
        providers: [{ provide: APP_GUARD, useClass: CircuitBreakerGuard.requiring('paymnts') }],
      }),
    ).rejects.toThrow(
      'Circuit breaker "paymnts" used by CircuitBreakerGuard.requiring() is not defined, and CircuitBreakerModule is strict. Did you mean "payments"?',
    );
    await expect(
      start([CircuitBreakerModule.forRoot({ breakers: { payments: {} } })], {
        providers: [
          {
            provide: APP_GUARD,
            useClass: CircuitBreakerGuard.requiring({ name: 'payments', key: () => 'x' }),
          },
        ],
      }),
    ).rejects.toThrow(
      'CircuitBreakerGuard.requiring() gives a key, but circuit breaker "payments" is not per-key.',
    );
  });

  it('refuses bad arguments where the class is declared', () => {
    expect(() => RequireCircuitBreaker()).not.toThrow();
    expect(() => {
      class Empty {
        @RequireCircuitBreaker()
        get() {}
      }
      return Empty;
    }).toThrow('@RequireCircuitBreaker() on Empty.get: names no breaker.');
    expect(() => {
      class Blank {
        @RequireCircuitBreaker('')
        get() {}
      }
      return Blank;
    }).toThrow('"[0]"');
  });
});
