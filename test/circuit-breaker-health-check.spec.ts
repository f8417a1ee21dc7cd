import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HealthCheckScheduler, type Breaker } from '../lib/core/index.js';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../lib/index.js';
import { CircuitBreakerMetricsModule } from '../lib/prometheus/index.js';
import { Registry } from 'prom-client';
import { ManualClock } from './helpers/manual-clock.js';
import { nestApps } from './helpers/nest-app.js';

const startApp = nestApps();
const schedulerOf = (breaker: Breaker) =>
  (breaker as unknown as { env: { healthCheckScheduler: HealthCheckScheduler } }).env
    .healthCheckScheduler;

describe('CircuitBreakerModule: one health check scheduler per registry', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('every breaker of an application shares one scheduler, whose one timer checks them; shutdown stops it', async () => {
    const clock = new ManualClock();
    const health = { payments: vi.fn(async () => 'up'), search: vi.fn(async () => 'up') };
    const probed = (name: 'payments' | 'search') => ({
      consecutiveFailures: 1,
      openDurationMs: 60_000,
      // No call deadline: the only timer left is the scheduler's.
      timeoutMs: false as const,
      healthCheck: { fn: health[name], intervalMs: 1_000 },
    });
    const app = await startApp([
      CircuitBreakerModule.forRoot({
        clock,
        breakers: { payments: probed('payments'), search: probed('search'), plain: {} },
      }),
    ]);
    const registry = app.get(CircuitBreakerRegistry);
    const [payments, search, plain] = ['payments', 'search', 'plain'].map((n) => registry.get(n));
    const scheduler = schedulerOf(payments!);
    expect(scheduler).toBeInstanceOf(HealthCheckScheduler);
    expect(schedulerOf(search!)).toBe(scheduler);
    expect(schedulerOf(plain!)).toBe(scheduler);
    // A second application has its own.
    const other = await startApp([CircuitBreakerModule.forRoot({ breakers: { payments: {} } })]);
    expect(schedulerOf(other.get(CircuitBreakerRegistry).get('payments'))).not.toBe(scheduler);

    expect(scheduler.armed).toBe(false);
    for (const breaker of [payments!, search!])
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    expect(scheduler.size).toBe(2);
    expect(scheduler.armed).toBe(true);
    expect(vi.getTimerCount()).toBe(1);
    clock.advance(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(health.payments).toHaveBeenCalledTimes(1);
    expect(health.search).toHaveBeenCalledTimes(1);
    expect([payments!.state, search!.state]).toEqual(['half-open', 'half-open']);
    expect(scheduler.armed).toBe(false);

    await payments!.execute(() => 'ok');
    await payments!.execute(() => Promise.reject(new Error('down again'))).catch(() => undefined);
    expect(scheduler.size).toBe(1);
    await app.close();
    expect(scheduler.size).toBe(0);
    expect(scheduler.armed).toBe(false);
  });

  it('counts the health checks in Prometheus by result', async () => {
    const clock = new ManualClock();
    let up = false;
    const metrics = new Registry();
    const app = await startApp([
      CircuitBreakerModule.forRoot({
        clock,
        breakers: {
          payments: {
            consecutiveFailures: 1,
            timeoutMs: false,
            healthCheck: {
              fn: async () => (up ? 'up' : Promise.reject(new Error('down'))),
              intervalMs: 500,
            },
          },
        },
      }),
      CircuitBreakerMetricsModule.forRoot({ registry: metrics }),
    ]);
    const payments = app.get(CircuitBreakerRegistry).get('payments');
    await payments.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    clock.advance(500);
    await vi.advanceTimersByTimeAsync(500);
    up = true;
    clock.advance(500);
    await vi.advanceTimersByTimeAsync(500);
    expect(payments.state).toBe('half-open');
    const lines = (await metrics.metrics())
      .split('\n')
      .filter((line) => line.startsWith('circuit_breaker_health_checks_total{'));
    expect(lines).toEqual([
      'circuit_breaker_health_checks_total{name="payments",result="failed"} 1',
      'circuit_breaker_health_checks_total{name="payments",result="succeeded"} 1',
    ]);
  });
});
