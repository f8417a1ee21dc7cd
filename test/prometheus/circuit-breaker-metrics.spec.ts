import { Registry, register } from 'prom-client';
import { firstValueFrom, of } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  circuitBreaker,
  withRetry,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  ConcurrencyLimiter,
  type BreakerOptions,
  type LimitPermit,
  type BreakerStore,
} from '../../lib/index.js';
import {
  CircuitBreakerMetricsModule,
  type CircuitBreakerMetricsOptions,
} from '../../lib/prometheus/index.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { nestApps } from '../helpers/nest-app.js';

// Registered before nestApps(), so that it runs after the applications are closed.
afterEach(() => {
  register.clear();
});

const startApp = nestApps();

async function start(
  clock: ManualClock,
  breakers: Record<string, BreakerOptions>,
  metrics?: CircuitBreakerMetricsOptions,
) {
  const app = await startApp([
    CircuitBreakerModule.forRoot({ clock, breakers }),
    CircuitBreakerMetricsModule.forRoot(metrics),
  ]);
  return { registry: app.get(CircuitBreakerRegistry), close: () => app.close() };
}

/** The sample lines of one metric (of a histogram: pass `<name>_bucket`, `_sum` or `_count`), in exposition order. */
function series(exposition: string, name: string): string[] {
  return exposition
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

/** A call that takes `ms` on the injected clock, then settles as `settle` does. */
function taking<T>(clock: ManualClock, ms: number, settle: () => Promise<T>) {
  return async () => {
    clock.advance(ms);
    return settle();
  };
}

const ok = () => Promise.resolve('ok');
const rejecting = (error: unknown) => () => Promise.reject(error);
const swallow = () => undefined;
const timedOut = () => Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' });

describe('CircuitBreakerMetricsModule', () => {
  it('reports a scripted outage: state, calls by outcome and rejection reason, transitions, probes, durations and the window', async () => {
    const clock = new ManualClock();
    const metrics = new Registry();
    const { registry } = await start(
      clock,
      {
        payments: {
          consecutiveFailures: 3,
          openDurationMs: 30_000,
          halfOpen: { maxWaitMs: 60_000 },
        },
      },
      { registry: metrics },
    );
    const payments = registry.get('payments');

    // Closed: two successes, a call the caller gave up on, a 429, then a timeout and an error.
    await payments.execute(taking(clock, 120, ok));
    await payments.execute(taking(clock, 40, ok));
    const abandoned = payments.acquire();
    clock.advance(5);
    abandoned.release();
    await payments.execute(taking(clock, 30, rejecting(httpError(429)))).catch(swallow);
    await payments.execute(taking(clock, 2_000, rejecting(timedOut()))).catch(swallow);
    await payments.execute(taking(clock, 20, rejecting(new Error('boom')))).catch(swallow);

    let scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_window_calls')).toEqual([
      'circuit_breaker_window_calls{name="payments"} 4',
    ]);
    expect(series(scrape, 'circuit_breaker_window_failure_rate')).toEqual([
      'circuit_breaker_window_failure_rate{name="payments"} 0.5',
    ]);

    // The third failure in a row opens it; open, it rejects, and a fallback serves one of the rejected calls.
    await payments.execute(taking(clock, 10, rejecting(httpError(503)))).catch(swallow);
    await payments.execute(ok).catch(swallow);
    expect(
      await firstValueFrom(
        of('fresh').pipe(circuitBreaker(payments, { fallback: () => of('cached') })),
      ),
    ).toBe('cached');

    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_state')).toEqual([
      'circuit_breaker_state{name="payments",state="closed"} 0',
      'circuit_breaker_state{name="payments",state="open"} 1',
      'circuit_breaker_state{name="payments",state="half-open"} 0',
      'circuit_breaker_state{name="payments",state="isolated"} 0',
      'circuit_breaker_state{name="payments",state="disabled"} 0',
      'circuit_breaker_state{name="payments",state="metrics-only"} 0',
    ]);
    expect(series(scrape, 'circuit_breaker_window_calls')).toEqual([
      'circuit_breaker_window_calls{name="payments"} 0',
    ]);
    expect(series(scrape, 'circuit_breaker_window_failure_rate')).toEqual([
      'circuit_breaker_window_failure_rate{name="payments"} 0',
    ]);

    // Nobody calls, yet the scrape sees the open duration has ended.
    clock.advance(30_000);
    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_state')).toContain(
      'circuit_breaker_state{name="payments",state="half-open"} 1',
    );
    expect(series(scrape, 'circuit_breaker_state')).toContain(
      'circuit_breaker_state{name="payments",state="open"} 0',
    );

    // Half-open: a probe hangs, a second call finds the budget taken, the probe expires and the breaker reopens.
    payments.acquire();
    await payments.execute(ok).catch(swallow);
    clock.advance(60_000);
    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_state')).toContain(
      'circuit_breaker_state{name="payments",state="open"} 1',
    );

    // Open again for 30 s, then a probe that succeeds in 60 ms closes it.
    clock.advance(30_000);
    await payments.execute(taking(clock, 60, ok));

    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_state')).toEqual([
      'circuit_breaker_state{name="payments",state="closed"} 1',
      'circuit_breaker_state{name="payments",state="open"} 0',
      'circuit_breaker_state{name="payments",state="half-open"} 0',
      'circuit_breaker_state{name="payments",state="isolated"} 0',
      'circuit_breaker_state{name="payments",state="disabled"} 0',
      'circuit_breaker_state{name="payments",state="metrics-only"} 0',
    ]);
    // The expired probe emits both `timeout` and `failure`: it is one call, counted once as a timeout.
    expect(series(scrape, 'circuit_breaker_calls_total')).toEqual([
      'circuit_breaker_calls_total{name="payments",outcome="success",reason=""} 3',
      'circuit_breaker_calls_total{name="payments",outcome="ignored",reason=""} 1',
      'circuit_breaker_calls_total{name="payments",outcome="overload",reason=""} 1',
      'circuit_breaker_calls_total{name="payments",outcome="timeout",reason=""} 2',
      'circuit_breaker_calls_total{name="payments",outcome="failure",reason=""} 2',
      'circuit_breaker_calls_total{name="payments",outcome="rejected",reason="open"} 2',
      'circuit_breaker_calls_total{name="payments",outcome="rejected",reason="half-open-busy"} 1',
    ]);
    // The rejected call a fallback served is one of the two rejections above, and only there.
    expect(series(scrape, 'circuit_breaker_fallbacks_total')).toEqual([
      'circuit_breaker_fallbacks_total{name="payments",source="observable"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_transitions_total')).toEqual([
      'circuit_breaker_transitions_total{name="payments",from="closed",to="open"} 1',
      'circuit_breaker_transitions_total{name="payments",from="open",to="half-open"} 2',
      'circuit_breaker_transitions_total{name="payments",from="half-open",to="open"} 1',
      'circuit_breaker_transitions_total{name="payments",from="half-open",to="closed"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_probes_total')).toEqual([
      'circuit_breaker_probes_total{name="payments",result="admitted"} 2',
      'circuit_breaker_probes_total{name="payments",result="failed"} 1',
      'circuit_breaker_probes_total{name="payments",result="succeeded"} 1',
    ]);
    // Observed: 0.12, 0.04, 0.03 (the 429), 2, 0.02, 0.01, 60 (the expired probe), 0.06; not the released call.
    expect(series(scrape, 'circuit_breaker_call_duration_seconds_bucket')).toEqual([
      'circuit_breaker_call_duration_seconds_bucket{le="0.005",name="payments"} 0',
      'circuit_breaker_call_duration_seconds_bucket{le="0.01",name="payments"} 1',
      'circuit_breaker_call_duration_seconds_bucket{le="0.025",name="payments"} 2',
      'circuit_breaker_call_duration_seconds_bucket{le="0.05",name="payments"} 4',
      'circuit_breaker_call_duration_seconds_bucket{le="0.075",name="payments"} 5',
      'circuit_breaker_call_duration_seconds_bucket{le="0.1",name="payments"} 5',
      'circuit_breaker_call_duration_seconds_bucket{le="0.25",name="payments"} 6',
      'circuit_breaker_call_duration_seconds_bucket{le="0.5",name="payments"} 6',
      'circuit_breaker_call_duration_seconds_bucket{le="0.75",name="payments"} 6',
      'circuit_breaker_call_duration_seconds_bucket{le="1",name="payments"} 6',
      'circuit_breaker_call_duration_seconds_bucket{le="2.5",name="payments"} 7',
      'circuit_breaker_call_duration_seconds_bucket{le="5",name="payments"} 7',
      'circuit_breaker_call_duration_seconds_bucket{le="7.5",name="payments"} 7',
      'circuit_breaker_call_duration_seconds_bucket{le="10",name="payments"} 7',
      'circuit_breaker_call_duration_seconds_bucket{le="+Inf",name="payments"} 8',
    ]);
    expect(series(scrape, 'circuit_breaker_call_duration_seconds_sum')).toEqual([
      'circuit_breaker_call_duration_seconds_sum{name="payments"} 62.28',
    ]);
    expect(series(scrape, 'circuit_breaker_call_duration_seconds_count')).toEqual([
      'circuit_breaker_call_duration_seconds_count{name="payments"} 8',
    ]);
    expect(series(scrape, 'circuit_breaker_window_calls')).toEqual([
      'circuit_breaker_window_calls{name="payments"} 0',
    ]);
  });

  it('names, types and help of every metric follow Prometheus conventions, behind the prefix', async () => {
    const metrics = new Registry();
    await start(new ManualClock(), { payments: {} }, { registry: metrics, prefix: 'shop_' });
    const scrape = await metrics.metrics();
    expect(scrape.split('\n').filter((line) => line.startsWith('# TYPE'))).toEqual([
      '# TYPE shop_circuit_breaker_state gauge',
      '# TYPE shop_circuit_breaker_forced gauge',
      '# TYPE shop_circuit_breaker_shared gauge',
      '# TYPE shop_circuit_breaker_window_failure_rate gauge',
      '# TYPE shop_circuit_breaker_window_calls gauge',
      '# TYPE shop_circuit_breaker_bulkhead_calls gauge',
      '# TYPE shop_circuit_breaker_keys gauge',
      '# TYPE shop_circuit_breaker_config_generation gauge',
      '# TYPE shop_circuit_breaker_config_info gauge',
      '# TYPE shop_circuit_breaker_limit gauge',
      '# TYPE shop_circuit_breaker_limit_requests gauge',
      '# TYPE shop_circuit_breaker_limit_shed_total counter',
      '# TYPE shop_circuit_breaker_calls_total counter',
      '# TYPE shop_circuit_breaker_fallbacks_total counter',
      '# TYPE shop_circuit_breaker_transitions_total counter',
      '# TYPE shop_circuit_breaker_probes_total counter',
      '# TYPE shop_circuit_breaker_retries_total counter',
      '# TYPE shop_circuit_breaker_health_checks_total counter',
      '# TYPE shop_circuit_breaker_call_duration_seconds histogram',
    ]);
    expect(scrape.split('\n').filter((line) => line.startsWith('# HELP'))).toEqual([
      '# HELP shop_circuit_breaker_state Whether the circuit breaker is in this state (1) or not (0); open and isolated breakers reject every call, half-open ones all but their probes; metrics-only and disabled ones admit every call.',
      '# HELP shop_circuit_breaker_forced Set to 1 while force() holds the circuit breaker, with the forced mode (open, metrics-only, disabled); absent otherwise. The reason is in the snapshot, the health details and the logs.',
      '# HELP shop_circuit_breaker_shared Set to 1 while the circuit breaker shares its state with the other replicas through the store, 0 while the store is unreachable and it decides alone; absent for breakers that do not share.',
      '# HELP shop_circuit_breaker_window_failure_rate Failures (timeouts included) among the calls in the circuit breaker window, as a ratio from 0 to 1: the rate a failureRateThreshold opens on.',
      '# HELP shop_circuit_breaker_window_calls Calls counted in the circuit breaker window (successes and failures, not overloads or ignored calls); no rate is judged below its minimum throughput.',
      '# HELP shop_circuit_breaker_bulkhead_calls Calls holding a slot of the circuit breaker bulkhead (state="active") and waiting for one (state="queued"); only breakers with a bulkhead have series.',
      '# HELP shop_circuit_breaker_keys For a per-key circuit breaker family: how many of the children it holds (one per target) are in each state, without a label per key. A tenant outage shows here while the family itself stays closed.',
      '# HELP shop_circuit_breaker_config_generation The generation of the circuit breaker options in force: 1 for the options first in force, one more for each reconfiguration (reconfigure(), a fleet reconfiguration, a reload), counted as it happens.',
      '# HELP shop_circuit_breaker_config_info Always 1; its labels are the thresholds in force (window, failure_rate_threshold, minimum_throughput, consecutive_failures, slow_call_duration_ms, slow_call_rate_threshold, timeout_ms, open_duration_ms; empty when unset). One series per circuit breaker, replaced when a reconfiguration changes them.',
      '# HELP shop_circuit_breaker_limit How many requests a concurrency limiter (forRoot({ limiters })) lets run at once now, as its algorithm found it.',
      '# HELP shop_circuit_breaker_limit_requests Requests holding a place of a concurrency limiter (state="in_flight") and waiting for one (state="queued").',
      '# HELP shop_circuit_breaker_limit_shed_total Requests a concurrency limiter shed (refused, timed out in its queue, or sent out of it for a more important one), by criticality.',
      '# HELP shop_circuit_breaker_calls_total Calls through the circuit breaker, each counted once, by outcome: success, failure, timeout, overload, ignored, rejected (not attempted; reason says why). Fallbacks served are counted in circuit_breaker_fallbacks_total.',
      '# HELP shop_circuit_breaker_fallbacks_total Calls answered by a fallback instead of their outcome (already counted in circuit_breaker_calls_total as rejected, failure, timeout or overload), by source: method, function, observable (the circuitBreaker() operator), lastGood.',
      '# HELP shop_circuit_breaker_transitions_total State changes of the circuit breaker.',
      '# HELP shop_circuit_breaker_probes_total Half-open probe calls by result: admitted, then succeeded, failed, released (outcome ignored, permit returned) or abandoned (still in flight when their round ended).',
      '# HELP shop_circuit_breaker_retries_total Retries of a retry policy through the circuit breaker (withRetry() or the decorator retry option), by result: scheduled, or budget-exhausted (the retry budget refused it and the caller got the failure).',
      '# HELP shop_circuit_breaker_health_checks_total Active health checks (the healthCheck option, run while the circuit breaker is open) by result: succeeded (the breaker moved on) or failed.',
      '# HELP shop_circuit_breaker_call_duration_seconds Duration of the calls the circuit breaker let through, in seconds, whatever their outcome (success, failure, timeout, overload) except ignored.',
    ]);
  });

  it('shows in circuit_breaker_shared whether each sharing breaker shares now, and nothing for one that does not share', async () => {
    const metrics = new Registry();
    let reachable = true;
    const store: BreakerStore = {
      coordinator: {
        transitioned: () => undefined,
        mayProbe: () => true,
        coordinationOf: () => ({ shared: reachable, storeErrors: reachable ? 0 : 3 }),
      },
      hydrate: async () => undefined,
      close: async () => undefined,
    };
    await startApp([
      CircuitBreakerModule.forRoot({
        clock: new ManualClock(),
        store,
        breakers: { payments: {}, flags: { share: false } },
      }),
      CircuitBreakerMetricsModule.forRoot({ registry: metrics }),
    ]);
    expect(series(await metrics.metrics(), 'circuit_breaker_shared')).toEqual([
      'circuit_breaker_shared{name="payments"} 1',
    ]);
    reachable = false;
    expect(series(await metrics.metrics(), 'circuit_breaker_shared')).toEqual([
      'circuit_breaker_shared{name="payments"} 0',
    ]);
  });

  it('shows a forced breaker in circuit_breaker_forced with its forced state, only while forced', async () => {
    const metrics = new Registry();
    const { registry } = await start(
      new ManualClock(),
      { payments: {}, search: {} },
      { registry: metrics },
    );
    expect(series(await metrics.metrics(), 'circuit_breaker_forced')).toEqual([]);
    registry.get('payments').force('open', { reason: 'maintenance' });
    expect(series(await metrics.metrics(), 'circuit_breaker_forced')).toEqual([
      'circuit_breaker_forced{name="payments",state="open"} 1',
    ]);
    registry.get('payments').release();
    expect(series(await metrics.metrics(), 'circuit_breaker_forced')).toEqual([]);
  });

  it('shows the bulkhead of a breaker that has one, and counts its rejections by reason bulkhead-full', async () => {
    const metrics = new Registry();
    const { registry } = await start(
      new ManualClock(),
      { inventory: { timeoutMs: false, bulkhead: { maxConcurrent: 1, maxQueue: 1 } }, search: {} },
      { registry: metrics },
    );
    const inventory = registry.get('inventory');
    let release!: () => void;
    const running = inventory.execute(() => new Promise<void>((resolve) => (release = resolve)));
    const queued = inventory.execute(() => 'queued');
    await inventory.execute(() => 'refused').catch(swallow);
    let scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_bulkhead_calls')).toEqual([
      'circuit_breaker_bulkhead_calls{name="inventory",state="active"} 1',
      'circuit_breaker_bulkhead_calls{name="inventory",state="queued"} 1',
    ]);
    expect(
      series(scrape, 'circuit_breaker_calls_total').filter((line) => line.includes('bulkhead')),
    ).toEqual([
      'circuit_breaker_calls_total{name="inventory",outcome="rejected",reason="bulkhead-full"} 1',
    ]);
    release();
    await running;
    await queued;
    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_bulkhead_calls')).toEqual([
      'circuit_breaker_bulkhead_calls{name="inventory",state="active"} 0',
      'circuit_breaker_bulkhead_calls{name="inventory",state="queued"} 0',
    ]);
  });

  it('shows each concurrency limiter: its limit, requests in flight and queued, shed by criticality', async () => {
    const metrics = new Registry();
    const clock = new ManualClock();
    const { registry } = await start(clock, { search: {} }, { registry: metrics });
    registry.addLimiter(
      new ConcurrencyLimiter(
        'api',
        { algorithm: 'fixed', initialLimit: 1, maxQueue: 1 },
        { clock },
      ),
    );
    const api = registry.limiter('api');
    const running = api.tryAcquire() as LimitPermit;
    const queued = api.acquire('sheddable') as Promise<LimitPermit>;
    api.tryAcquire('sheddable');
    api.tryAcquire('critical-plus');
    let scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_limit')).toEqual([
      'circuit_breaker_limit{name="api"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_limit_requests')).toEqual([
      'circuit_breaker_limit_requests{name="api",state="in_flight"} 1',
      'circuit_breaker_limit_requests{name="api",state="queued"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_limit_shed_total')).toEqual([
      'circuit_breaker_limit_shed_total{name="api",criticality="critical-plus"} 1',
      'circuit_breaker_limit_shed_total{name="api",criticality="critical"} 0',
      'circuit_breaker_limit_shed_total{name="api",criticality="sheddable-plus"} 0',
      'circuit_breaker_limit_shed_total{name="api",criticality="sheddable"} 1',
    ]);
    running.succeed();
    (await queued).succeed();
    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_limit_requests')).toEqual([
      'circuit_breaker_limit_requests{name="api",state="in_flight"} 0',
      'circuit_breaker_limit_requests{name="api",state="queued"} 0',
    ]);
  });

  it('counts retries by result: scheduled, and budget-exhausted past the retry budget', async () => {
    const metrics = new Registry();
    const { registry } = await start(
      new ManualClock(),
      { stock: { timeoutMs: false } },
      { registry: metrics },
    );
    // One retry a 10 s window, then the budget is spent.
    const policy = withRetry(registry.get('stock'), {
      attempts: 2,
      backoff: { initialMs: 0, jitter: 0 },
      budget: { ratio: 0, minPerSecond: 0.1 },
    });
    await policy.execute(rejecting(new Error('down'))).catch(swallow);
    await policy.execute(rejecting(new Error('down'))).catch(swallow);
    expect(series(await metrics.metrics(), 'circuit_breaker_retries_total')).toEqual([
      'circuit_breaker_retries_total{name="stock",result="scheduled"} 1',
      'circuit_breaker_retries_total{name="stock",result="budget-exhausted"} 1',
    ]);
  });

  it('two applications share the global register: metrics are reused, and a closed application leaves the gauges', async () => {
    const clock = new ManualClock();
    const first = await start(clock, { inventory: {} });
    const second = await start(clock, { shipping: {} });
    await first.registry.get('inventory').execute(ok);
    await second.registry.get('shipping').execute(ok);
    // Built after start-up: the registry reports it too.
    await second.registry.getOrCreate('late').execute(ok);

    let scrape = await register.metrics();
    expect(
      series(scrape, 'circuit_breaker_state').filter((line) => line.includes('state="closed"')),
    ).toEqual([
      'circuit_breaker_state{name="inventory",state="closed"} 1',
      'circuit_breaker_state{name="shipping",state="closed"} 1',
      'circuit_breaker_state{name="late",state="closed"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_window_calls')).toEqual([
      'circuit_breaker_window_calls{name="inventory"} 1',
      'circuit_breaker_window_calls{name="shipping"} 1',
      'circuit_breaker_window_calls{name="late"} 1',
    ]);

    await first.close();
    // A closed application no longer counts calls, even through a breaker someone kept.
    await first.registry.get('inventory').execute(ok);
    scrape = await register.metrics();
    expect(
      series(scrape, 'circuit_breaker_state').filter((line) => line.includes('state="closed"')),
    ).toEqual([
      'circuit_breaker_state{name="shipping",state="closed"} 1',
      'circuit_breaker_state{name="late",state="closed"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_window_calls')).toEqual([
      'circuit_breaker_window_calls{name="shipping"} 1',
      'circuit_breaker_window_calls{name="late"} 1',
    ]);
    // Counters are totals of the process: the closed application's calls stay counted.
    expect(series(scrape, 'circuit_breaker_calls_total')).toEqual([
      'circuit_breaker_calls_total{name="inventory",outcome="success",reason=""} 1',
      'circuit_breaker_calls_total{name="shipping",outcome="success",reason=""} 1',
      'circuit_breaker_calls_total{name="late",outcome="success",reason=""} 1',
    ]);
  });

  it('counts the children of a per-key family under the family name by default', async () => {
    const clock = new ManualClock();
    const metrics = new Registry();
    const { registry } = await start(
      clock,
      { upstreams: { perKey: { maxKeys: 10 }, consecutiveFailures: 1 } },
      { registry: metrics },
    );
    const family = registry.get('upstreams');
    await family.forKey('a').execute(taking(clock, 15, ok));
    await family
      .forKey('b')
      .execute(rejecting(new Error('down')))
      .catch(swallow);
    await family.forKey('b').execute(ok).catch(swallow);

    const scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_state')).toEqual([
      'circuit_breaker_state{name="upstreams",state="closed"} 1',
      'circuit_breaker_state{name="upstreams",state="open"} 0',
      'circuit_breaker_state{name="upstreams",state="half-open"} 0',
      'circuit_breaker_state{name="upstreams",state="isolated"} 0',
      'circuit_breaker_state{name="upstreams",state="disabled"} 0',
      'circuit_breaker_state{name="upstreams",state="metrics-only"} 0',
    ]);
    expect(series(scrape, 'circuit_breaker_calls_total')).toEqual([
      'circuit_breaker_calls_total{name="upstreams",outcome="success",reason=""} 1',
      'circuit_breaker_calls_total{name="upstreams",outcome="failure",reason=""} 1',
      'circuit_breaker_calls_total{name="upstreams",outcome="rejected",reason="open"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_transitions_total')).toEqual([
      'circuit_breaker_transitions_total{name="upstreams",from="closed",to="open"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_call_duration_seconds_count')).toEqual([
      'circuit_breaker_call_duration_seconds_count{name="upstreams"} 2',
    ]);
  });

  it('keyLabel: true labels every metric with the key, the family itself with an empty key', async () => {
    const clock = new ManualClock();
    const metrics = new Registry();
    const { registry } = await start(
      clock,
      { upstreams: { perKey: { maxKeys: 10 }, consecutiveFailures: 1 } },
      { registry: metrics, keyLabel: true },
    );
    const family = registry.get('upstreams');
    await family.forKey('a').execute(taking(clock, 15, ok));
    await family
      .forKey('b')
      .execute(rejecting(new Error('down')))
      .catch(swallow);
    await family.forKey('b').execute(ok).catch(swallow);

    const scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_state').filter((line) => line.endsWith(' 1'))).toEqual([
      'circuit_breaker_state{name="upstreams",key="",state="closed"} 1',
      'circuit_breaker_state{name="upstreams",key="a",state="closed"} 1',
      'circuit_breaker_state{name="upstreams",key="b",state="open"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_window_calls')).toEqual([
      'circuit_breaker_window_calls{name="upstreams",key=""} 0',
      'circuit_breaker_window_calls{name="upstreams",key="a"} 1',
      'circuit_breaker_window_calls{name="upstreams",key="b"} 0',
    ]);
    expect(series(scrape, 'circuit_breaker_calls_total')).toEqual([
      'circuit_breaker_calls_total{name="upstreams",key="a",outcome="success",reason=""} 1',
      'circuit_breaker_calls_total{name="upstreams",key="b",outcome="failure",reason=""} 1',
      'circuit_breaker_calls_total{name="upstreams",key="b",outcome="rejected",reason="open"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_transitions_total')).toEqual([
      'circuit_breaker_transitions_total{name="upstreams",key="b",from="closed",to="open"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_call_duration_seconds_sum')).toEqual([
      'circuit_breaker_call_duration_seconds_sum{name="upstreams",key="a"} 0.015',
      'circuit_breaker_call_duration_seconds_sum{name="upstreams",key="b"} 0',
    ]);
  });

  it('shows a tenant outage without a key label: circuit_breaker_keys counts the children of a family per state', async () => {
    const clock = new ManualClock();
    const metrics = new Registry();
    const { registry } = await start(
      clock,
      {
        tenants: { perKey: { maxKeys: 10 }, consecutiveFailures: 1, openDurationMs: 10_000 },
        plain: {},
      },
      { registry: metrics },
    );
    const family = registry.get('tenants');
    let scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_keys').filter((line) => !line.endsWith(' 0'))).toEqual(
      [],
    );
    await family.forKey('acme').execute(ok);
    await family.forKey('globex').execute(ok);
    await family
      .forKey('initech')
      .execute(rejecting(new Error('down')))
      .catch(swallow);

    scrape = await metrics.metrics();
    // The family's own (aggregate) level stays closed: the state metric alone never sees this outage.
    expect(series(scrape, 'circuit_breaker_state')).toContain(
      'circuit_breaker_state{name="tenants",state="closed"} 1',
    );
    expect(series(scrape, 'circuit_breaker_keys')).toEqual([
      'circuit_breaker_keys{name="tenants",state="closed"} 2',
      'circuit_breaker_keys{name="tenants",state="open"} 1',
      'circuit_breaker_keys{name="tenants",state="half-open"} 0',
      'circuit_breaker_keys{name="tenants",state="isolated"} 0',
      'circuit_breaker_keys{name="tenants",state="disabled"} 0',
      'circuit_breaker_keys{name="tenants",state="metrics-only"} 0',
    ]);
    // Nobody calls, yet the scrape sees the open duration of the tenant has ended.
    clock.advance(10_000);
    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_keys').filter((line) => !line.endsWith(' 0'))).toEqual([
      'circuit_breaker_keys{name="tenants",state="closed"} 2',
      'circuit_breaker_keys{name="tenants",state="half-open"} 1',
    ]);
  });

  it('circuit_breaker_keys has no key label with keyLabel: true either: one series per family and state', async () => {
    const metrics = new Registry();
    const { registry } = await start(
      new ManualClock(),
      { tenants: { perKey: { maxKeys: 50 }, consecutiveFailures: 1 } },
      { registry: metrics, keyLabel: true },
    );
    const family = registry.get('tenants');
    for (let i = 0; i < 40; i++)
      await family
        .forKey(`tenant-${i}`)
        .execute(i % 4 === 0 ? rejecting(new Error('down')) : ok)
        .catch(swallow);
    const scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_keys').filter((line) => !line.endsWith(' 0'))).toEqual([
      'circuit_breaker_keys{name="tenants",state="closed"} 30',
      'circuit_breaker_keys{name="tenants",state="open"} 10',
    ]);
  });

  it('a reconfiguration changes circuit_breaker_config_generation and the thresholds of circuit_breaker_config_info', async () => {
    const metrics = new Registry();
    const { registry } = await start(
      new ManualClock(),
      {
        payments: { window: { type: 'count', size: 20 }, failureRateThreshold: 0.5 },
        tenants: { perKey: { maxKeys: 10 }, consecutiveFailures: 3, timeoutMs: false },
      },
      { registry: metrics, keyLabel: true },
    );
    await registry.get('tenants').forKey('acme').execute(ok);
    let scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_config_generation')).toEqual([
      'circuit_breaker_config_generation{name="payments"} 1',
      'circuit_breaker_config_generation{name="tenants"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_config_info')).toEqual([
      'circuit_breaker_config_info{name="payments",window="count:20",failure_rate_threshold="0.5",minimum_throughput="20",consecutive_failures="10",slow_call_duration_ms="",slow_call_rate_threshold="",timeout_ms="2000",open_duration_ms="10000"} 1',
      'circuit_breaker_config_info{name="tenants",window="count:100",failure_rate_threshold="",minimum_throughput="20",consecutive_failures="3",slow_call_duration_ms="",slow_call_rate_threshold="",timeout_ms="",open_duration_ms="10000"} 1',
    ]);

    await registry
      .control('payments')
      .reconfigure({ failureRateThreshold: 0.25, openDurationMs: 5_000 });
    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_config_generation')).toEqual([
      'circuit_breaker_config_generation{name="payments"} 2',
      'circuit_breaker_config_generation{name="tenants"} 1',
    ]);
    // The series of the options no longer in force is gone: one series per breaker, whatever happened.
    expect(series(scrape, 'circuit_breaker_config_info')[0]).toBe(
      'circuit_breaker_config_info{name="payments",window="count:20",failure_rate_threshold="0.25",minimum_throughput="20",consecutive_failures="10",slow_call_duration_ms="",slow_call_rate_threshold="",timeout_ms="2000",open_duration_ms="5000"} 1',
    );
    expect(series(scrape, 'circuit_breaker_config_info')).toHaveLength(2);

    // An option that is not a threshold is a reconfiguration too.
    await registry.control('payments').reconfigure({
      failureRateThreshold: 0.25,
      openDurationMs: 5_000,
      backoff: { multiplier: 3 },
    });
    expect(
      series(await metrics.metrics(), 'circuit_breaker_config_generation{name="payments"}'),
    ).toEqual(['circuit_breaker_config_generation{name="payments"} 3']);
    // Changed and changed back between two scrapes (A, B, A): both reconfigurations show,
    // although the options in force at each scrape are the same.
    await registry.control('payments').reconfigure({ failureRateThreshold: 0.9 });
    await registry.control('payments').reconfigure({
      failureRateThreshold: 0.25,
      openDurationMs: 5_000,
      backoff: { multiplier: 3 },
    });
    scrape = await metrics.metrics();
    expect(series(scrape, 'circuit_breaker_config_generation')).toEqual([
      'circuit_breaker_config_generation{name="payments"} 5',
      'circuit_breaker_config_generation{name="tenants"} 1',
    ]);
    expect(series(scrape, 'circuit_breaker_config_info')[0]).toContain(
      'failure_rate_threshold="0.25"',
    );
  });

  describe('keyLabel: true and evicted children', () => {
    /** The distinct key label values across every metric of a scrape. */
    const keysIn = (exposition: string) =>
      [...new Set([...exposition.matchAll(/key="([^"]*)"/g)].map((match) => match[1]))].sort();

    it('removes every series of an evicted child, so maxKeys bounds the series too', async () => {
      const clock = new ManualClock();
      const metrics = new Registry();
      const { registry } = await start(
        clock,
        { hosts: { perKey: { maxKeys: 5 }, consecutiveFailures: 1, openDurationMs: 1_000 } },
        { registry: metrics, keyLabel: true },
      );
      const hosts = registry.get('hosts');
      for (let i = 0; i < 200; i++) {
        const child = hosts.forKey(`host-${i}`);
        // Every kind of series: a failure that opens it, a rejection a fallback serves, then a probe that closes it (evictable again).
        await child.execute(taking(clock, 10, rejecting(new Error('down')))).catch(swallow);
        await firstValueFrom(
          of('fresh').pipe(circuitBreaker(child, { fallback: () => of('cached') })),
        );
        clock.advance(1_000);
        await child.execute(taking(clock, 10, ok));
      }
      const scrape = await metrics.metrics();
      const held = [...hosts.children()].map((child) => child.key!);
      expect(held).toEqual(['host-195', 'host-196', 'host-197', 'host-198', 'host-199']);
      expect(keysIn(scrape)).toEqual(['', ...held].sort());
      // Per held child: 3 call outcomes, 3 transitions, 2 probe results, one histogram.
      expect(
        series(scrape, 'circuit_breaker_calls_total').filter((line) => line.includes('key="host-')),
      ).toHaveLength(15);
      expect(
        series(scrape, 'circuit_breaker_transitions_total').filter((line) =>
          line.includes('key="host-'),
        ),
      ).toHaveLength(15);
      expect(
        series(scrape, 'circuit_breaker_probes_total').filter((line) =>
          line.includes('key="host-'),
        ),
      ).toHaveLength(10);
      expect(
        series(scrape, 'circuit_breaker_fallbacks_total').filter((line) =>
          line.includes('key="host-'),
        ),
      ).toHaveLength(5);
      expect(
        series(scrape, 'circuit_breaker_call_duration_seconds_count').filter((line) =>
          line.includes('key="host-'),
        ),
      ).toHaveLength(5);
      expect(hosts.snapshot().family).toMatchObject({ keys: 5, evicted: 195, overflowed: 0 });
    });

    it('does not bring an evicted child back through a call that settles after its eviction', async () => {
      const clock = new ManualClock();
      const metrics = new Registry();
      const { registry } = await start(
        clock,
        { hosts: { perKey: { maxKeys: 2 } } },
        { registry: metrics, keyLabel: true },
      );
      const hosts = registry.get('hosts');
      const straggler = hosts.forKey('slow').acquire();
      await hosts.forKey('a').execute(ok);
      await hosts.forKey('b').execute(ok); // evicts "slow", its call still in flight
      straggler.succeed('late');
      expect(keysIn(await metrics.metrics())).toEqual(['', 'a', 'b']);
    });
  });

  it('refuses to share a registry between applications that label keys differently', async () => {
    const metrics = new Registry();
    await start(new ManualClock(), { payments: {} }, { registry: metrics });
    await expect(
      start(new ManualClock(), { payments: {} }, { registry: metrics, keyLabel: true }),
    ).rejects.toThrow(
      'CircuitBreakerMetricsModule: the registry already holds a metric "circuit_breaker_state" (gauge with labels name, state), ' +
        'but this module needs a gauge with labels name, key, state. ' +
        'Give every CircuitBreakerMetricsModule.forRoot() that shares a registry the same keyLabel, or a different prefix.',
    );
  });

  it('validates its options when the module is defined', () => {
    expect(() =>
      CircuitBreakerMetricsModule.forRoot({ registery: new Registry() } as never),
    ).toThrow(
      'CircuitBreakerMetricsModule: unknown option "registery". Known options: registry, prefix, keyLabel.',
    );
    expect(() => CircuitBreakerMetricsModule.forRoot({ registry: {} as never })).toThrow(
      'CircuitBreakerMetricsModule: option "registry" must be a prom-client Registry, got an object.',
    );
    expect(() => CircuitBreakerMetricsModule.forRoot({ prefix: '1st-' })).toThrow(
      'CircuitBreakerMetricsModule: option "prefix" must be a string of letters, digits, _ and : that does not start with a digit, got "1st-".',
    );
    expect(() => CircuitBreakerMetricsModule.forRoot({ keyLabel: 'yes' as never })).toThrow(
      'CircuitBreakerMetricsModule: option "keyLabel" must be a boolean, got "yes".',
    );
  });
});
