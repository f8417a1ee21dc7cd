import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  ConcurrencyLimiter,
  type LimitPermit,
} from '../../lib/index.js';
import {
  CircuitBreakerHealthIndicator,
  CircuitBreakerHealthModule,
  type CircuitBreakerHealthOptions,
} from '../../lib/terminus/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { nestApps } from '../helpers/nest-app.js';

let options: CircuitBreakerHealthOptions = {};

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly breakers: CircuitBreakerHealthIndicator,
  ) {}

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.breakers.isHealthy('circuit_breakers', options)]);
  }

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }
}

const clock = new ManualClock(1_000_000);
afterEach(() => {
  options = {};
});

const startApp = nestApps();

async function start() {
  const app = await startApp(
    [
      TerminusModule.forRoot({ logger: false }),
      CircuitBreakerModule.forRoot({
        clock,
        breakers: {
          payments: { consecutiveFailures: 1, openDurationMs: 5_000 },
          search: {},
          hosts: { perKey: {} },
        },
      }),
      CircuitBreakerHealthModule,
    ],
    { controllers: [HealthController] },
  );
  return { server: app.getHttpServer(), registry: app.get(CircuitBreakerRegistry) };
}

const closed = (since: number) => ({ state: 'closed', since, failureRate: 0, callsInWindow: 0 });

describe('CircuitBreakerHealthIndicator', () => {
  it('is up while every breaker is closed', async () => {
    const { server } = await start();
    const since = clock.now();
    const response = await request(server).get('/health/ready').expect(200);
    const info = {
      circuit_breakers: {
        status: 'up',
        total: 3,
        open: 0,
        halfOpen: 0,
        breakers: {
          payments: closed(since),
          search: closed(since),
          hosts: { ...closed(since), unhealthyKeys: 0 },
        },
      },
    };
    expect(response.body).toEqual({ status: 'ok', info, error: {}, details: info });
  });

  it('is down (503) while a breaker is open, with its retry estimate, then degraded while half-open, then up', async () => {
    const { server, registry } = await start();
    const since = clock.now();
    await registry
      .get('payments')
      .execute(() => Promise.reject(new Error('down')))
      .catch(() => undefined);
    clock.advance(1_000);
    const down = await request(server).get('/health/ready').expect(503);
    const failing = {
      circuit_breakers: {
        status: 'down',
        total: 3,
        open: 1,
        halfOpen: 0,
        breakers: {
          payments: {
            state: 'open',
            since,
            retryAfterMs: 4_000,
            failureRate: 0,
            callsInWindow: 0,
            lastTransition: {
              from: 'closed',
              to: 'open',
              reason: 'consecutive-failures',
              at: since,
              consecutiveFailures: 1,
            },
            lastFailure: { category: 'other', name: 'Error', message: 'down' },
          },
          search: closed(since),
          hosts: { ...closed(since), unhealthyKeys: 0 },
        },
      },
    };
    expect(down.body).toEqual({ status: 'error', info: {}, error: failing, details: failing });

    clock.advance(4_000);
    const degraded = await request(server).get('/health/ready').expect(200);
    expect(degraded.body.status).toBe('degraded');
    expect(degraded.body.details.circuit_breakers).toMatchObject({
      status: 'degraded',
      open: 0,
      halfOpen: 1,
      breakers: { payments: { state: 'half-open', since: since + 5_000 } },
    });

    await registry.get('payments').execute(() => 'recovered');
    await request(server)
      .get('/health/ready')
      .expect(200)
      .expect((r) => expect(r.body.status).toBe('ok'));
  });

  it('openStatus: degraded keeps HTTP 200 with the state visible, for dependencies every replica shares', async () => {
    options = { openStatus: 'degraded' };
    const { server, registry } = await start();
    // Open, not forced: isolate() is force('open'), which counts as forced (forcedOpenStatus).
    const search = registry.get('search');
    search.adoptOpen(search.clock.now() + 60_000);
    const response = await request(server).get('/health/ready').expect(200);
    expect(response.body.details.circuit_breakers).toMatchObject({
      status: 'degraded',
      open: 1,
      breakers: { search: { state: 'open' } },
    });
  });

  it('details: false hides names and failure rates', async () => {
    options = { details: false };
    const { server, registry } = await start();
    const search = registry.get('search');
    search.adoptOpen(search.clock.now() + 60_000);
    const response = await request(server).get('/health/ready').expect(503);
    expect(response.body.details).toEqual({
      circuit_breakers: { status: 'down', total: 3, open: 1, halfOpen: 0 },
    });
  });

  it('selects breakers by name, and reports unknown names as down instead of throwing', async () => {
    options = { breakers: ['search', 'nope'] };
    const { server } = await start();
    const response = await request(server).get('/health/ready').expect(503);
    expect(response.body.details).toEqual({
      circuit_breakers: {
        status: 'down',
        message:
          'Unknown circuit breakers: "nope". Check the names given to isHealthy({ breakers }) against CircuitBreakerModule\'s breakers.',
      },
    });
    options = { breakers: ['search'] };
    await request(server).get('/health/ready').expect(200);
  });

  it('liveness does not depend on breakers', async () => {
    const { server, registry } = await start();
    registry.get('payments').isolate();
    await request(server).get('/health/live').expect(200);
  });
});

describe('CircuitBreakerHealthIndicator and forced breakers', () => {
  it('reports a breaker forced open as forced, with its reason, and stays up by default', async () => {
    const { server, registry } = await start();
    const since = clock.now();
    registry
      .get('payments')
      .force('open', { reason: 'payments maintenance', by: 'ops', untilMs: since + 60_000 });
    const response = await request(server).get('/health/ready').expect(200);
    expect(response.body.info.circuit_breakers).toMatchObject({
      status: 'up',
      total: 3,
      open: 0,
      halfOpen: 0,
      forced: 1,
    });
    expect(response.body.info.circuit_breakers.breakers.payments).toMatchObject({
      state: 'isolated',
      forced: {
        state: 'open',
        reason: 'payments maintenance',
        by: 'ops',
        since,
        until: since + 60_000,
      },
    });
  });

  it('takes forcedOpenStatus for a forced-open breaker, and a force that lets calls through is up', async () => {
    const { server, registry } = await start();
    registry.get('search').force('disabled', { reason: 'bypass' });
    options = { forcedOpenStatus: 'down' };
    await request(server).get('/health/ready').expect(200);
    registry.get('payments').force('open', { reason: 'incident 42' });
    const response = await request(server).get('/health/ready').expect(503);
    expect(response.body.error.circuit_breakers).toMatchObject({
      status: 'down',
      open: 0,
      forced: 2,
    });
  });
});

describe('CircuitBreakerHealthIndicator with concurrency limiters', () => {
  const limited = async () => {
    const started = await start();
    started.registry.addLimiter(
      new ConcurrencyLimiter('api', { algorithm: 'fixed', initialLimit: 1 }, { clock }),
    );
    return started;
  };

  it('reports every limiter, up while none sheds', async () => {
    const { server, registry } = await limited();
    const permit = registry.limiter('api').tryAcquire() as LimitPermit;
    const response = await request(server).get('/health/ready').expect(200);
    expect(response.body.info.circuit_breakers).toMatchObject({
      status: 'up',
      shedding: 0,
      limiters: { api: { limit: 1, inFlight: 1, queued: 0, shed: 0, shedding: false } },
    });
    permit.succeed();
  });

  it('is degraded, not down, for 10 s after a limiter sheds; sheddingStatus changes that', async () => {
    const { server, registry } = await limited();
    const api = registry.limiter('api');
    const permit = api.tryAcquire() as LimitPermit;
    api.tryAcquire();
    permit.succeed();
    const degraded = await request(server).get('/health/ready').expect(200);
    expect(degraded.body.details.circuit_breakers).toMatchObject({
      status: 'degraded',
      shedding: 1,
      limiters: { api: { inFlight: 0, shed: 1, shedding: true } },
    });
    options = { sheddingStatus: 'down' };
    await request(server).get('/health/ready').expect(503);
    clock.advance(10_000);
    await request(server).get('/health/ready').expect(200);
  });

  it('takes the limiters named, none with [], and reports an unknown name as down', async () => {
    const { server } = await limited();
    options = { limiters: [] };
    const none = await request(server).get('/health/ready').expect(200);
    expect(none.body.info.circuit_breakers.limiters).toBeUndefined();
    options = { limiters: ['apj'] };
    const unknown = await request(server).get('/health/ready').expect(503);
    expect(unknown.body.error.circuit_breakers.message).toBe(
      'Unknown concurrency limiters: "apj". Check the names given to isHealthy({ limiters }) against CircuitBreakerModule\'s limiters.',
    );
  });
});
