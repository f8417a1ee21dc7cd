import { Controller, Get, Injectable, Param, Scope } from '@nestjs/common';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  type CircuitBreakerModuleOptions,
} from '../../lib/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { nestApps } from '../helpers/nest-app.js';

// The decorator on what Nest serves over HTTP: controller routes and the request-scoped providers behind them.

const startApp = nestApps();
const start = (
  options: CircuitBreakerModuleOptions & { httpFilter?: boolean },
  providers: unknown[],
  controllers: unknown[] = [],
) => startApp([CircuitBreakerModule.forRoot(options)], { providers, controllers });

const down = () => Object.assign(new Error('upstream down'), { status: 503 });

describe('@CircuitBreaker() on controller routes', () => {
  let healthy = true;
  @Controller('orders')
  class OrdersController {
    @CircuitBreaker({ name: 'orders.upstream', consecutiveFailures: 2, openDurationMs: 10_000 })
    @Get(':id')
    async above(@Param('id') id: string): Promise<{ id: string }> {
      if (!healthy) throw down();
      return { id };
    }

    @Get()
    @CircuitBreaker('orders.upstream')
    async below(): Promise<string[]> {
      if (!healthy) throw down();
      return ['o-1'];
    }
  }

  it('keeps the route above or below @Get(): 200, then 503 with Retry-After once open', async () => {
    healthy = true;
    const clock = new ManualClock();
    const app = await start({ clock, httpFilter: true }, [], [OrdersController]);
    const server = app.getHttpServer();
    await request(server).get('/orders/7').expect(200, { id: '7' });
    await request(server).get('/orders').expect(200, ['o-1']);
    healthy = false;
    await request(server).get('/orders/7').expect(500);
    await request(server).get('/orders').expect(500);
    clock.advance(2_500);
    const rejected = await request(server).get('/orders/7').expect(503);
    expect(rejected.headers['retry-after']).toBe('8');
    // The public body names no breaker (httpFilter: { details: true } would).
    expect(rejected.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'A dependency is unavailable; retry later.',
    });
  });

  it('works on request-scoped providers, each instance getting the application registry', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @CircuitBreaker('per-request')
      async work(): Promise<string> {
        return 'done';
      }
    }
    @Controller('scoped')
    class ScopedController {
      constructor(private readonly service: PerRequest) {}
      @Get()
      run() {
        return this.service.work();
      }
    }
    const app = await start({}, [PerRequest], [ScopedController]);
    await request(app.getHttpServer()).get('/scoped').expect(200, 'done');
    await request(app.getHttpServer()).get('/scoped').expect(200, 'done');
    expect(app.get(CircuitBreakerRegistry).get('per-request').snapshot().totals.successes).toBe(2);
  });
});
