import { readFileSync } from 'node:fs';
import { metrics as otelMetrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  MetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { firstValueFrom, of } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import {
  circuitBreaker,
  withRetry,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  ConcurrencyLimiter,
  type BreakerOptions,
  type LimitPermit,
} from '../../lib/index.js';
import {
  CircuitBreakerTelemetryModule,
  type CircuitBreakerTelemetryOptions,
} from '../../lib/opentelemetry/index.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { nestApps } from '../helpers/nest-app.js';

/** Collects on demand: no export interval, no timer. */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const startApp = nestApps();

function sdk() {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  startApp.onCleanup(() => meterProvider.shutdown());
  return { reader, meterProvider };
}

async function start(
  clock: ManualClock,
  breakers: Record<string, BreakerOptions>,
  telemetry?: CircuitBreakerTelemetryOptions,
) {
  const app = await startApp([
    CircuitBreakerModule.forRoot({ clock, breakers }),
    CircuitBreakerTelemetryModule.forRoot(telemetry),
  ]);
  return { registry: app.get(CircuitBreakerRegistry), close: () => app.close() };
}

/** The package's instruments as one collection sees them, by name. */
async function collect(reader: MetricReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'nestjs-circuit-breaker');
  return new Map((scope?.metrics ?? []).map((metric) => [metric.descriptor.name, metric]));
}

/** The data points of one instrument, without their timestamps. */
function points(
  collected: Map<string, MetricData>,
  name: string,
): { attributes: Record<string, unknown>; value: unknown }[] {
  return (collected.get(name)?.dataPoints ?? []).map((point) => ({
    attributes: point.attributes,
    value: point.value,
  }));
}

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
const payments = { 'circuit_breaker.name': 'payments' };
const stateOf = (name: Record<string, string>, current: string) =>
  ['closed', 'open', 'half-open', 'isolated', 'disabled', 'metrics-only'].map((state) => ({
    attributes: { ...name, 'circuit_breaker.state': state },
    value: state === current ? 1 : 0,
  }));

describe('CircuitBreakerTelemetryModule', () => {
  it('records a scripted outage: state, calls by outcome and rejection reason, transitions, probes, durations and the window', async () => {
    const clock = new ManualClock();
    const { reader, meterProvider } = sdk();
    const { registry } = await start(
      clock,
      {
        payments: {
          consecutiveFailures: 3,
          openDurationMs: 30_000,
          halfOpen: { maxWaitMs: 60_000 },
        },
      },
      { meterProvider },
    );
    const breaker = registry.get('payments');

    await breaker.execute(taking(clock, 120, ok));
    await breaker.execute(taking(clock, 40, ok));
    const abandoned = breaker.acquire();
    clock.advance(5);
    abandoned.release();
    await breaker.execute(taking(clock, 30, rejecting(httpError(429)))).catch(swallow);
    await breaker.execute(taking(clock, 2_000, rejecting(timedOut()))).catch(swallow);
    await breaker.execute(taking(clock, 20, rejecting(new Error('boom')))).catch(swallow);

    let collected = await collect(reader);
    expect(points(collected, 'circuit_breaker.window.calls')).toEqual([
      { attributes: payments, value: 4 },
    ]);
    expect(points(collected, 'circuit_breaker.window.failure_rate')).toEqual([
      { attributes: payments, value: 0.5 },
    ]);

    await breaker.execute(taking(clock, 10, rejecting(httpError(503)))).catch(swallow);
    await breaker.execute(ok).catch(swallow);
    expect(
      await firstValueFrom(
        of('fresh').pipe(circuitBreaker(breaker, { fallback: () => of('cached') })),
      ),
    ).toBe('cached');
    collected = await collect(reader);
    expect(points(collected, 'circuit_breaker.state')).toEqual(stateOf(payments, 'open'));

    // Nobody calls, yet the collection sees the open duration has ended.
    clock.advance(30_000);
    collected = await collect(reader);
    expect(points(collected, 'circuit_breaker.state')).toEqual(stateOf(payments, 'half-open'));

    breaker.acquire();
    await breaker.execute(ok).catch(swallow);
    clock.advance(60_000);
    collected = await collect(reader);
    expect(points(collected, 'circuit_breaker.state')).toEqual(stateOf(payments, 'open'));

    clock.advance(30_000);
    await breaker.execute(taking(clock, 60, ok));

    collected = await collect(reader);
    expect(points(collected, 'circuit_breaker.state')).toEqual(stateOf(payments, 'closed'));
    const outcome = (value: string, reason?: string) => ({
      ...payments,
      'circuit_breaker.outcome': value,
      ...(reason === undefined ? {} : { 'circuit_breaker.rejection.reason': reason }),
    });
    // The expired probe emits both `timeout` and `failure`: it is one call, counted once as a timeout.
    expect(points(collected, 'circuit_breaker.calls')).toEqual([
      { attributes: outcome('success'), value: 3 },
      { attributes: outcome('ignored'), value: 1 },
      { attributes: outcome('overload'), value: 1 },
      { attributes: outcome('timeout'), value: 2 },
      { attributes: outcome('failure'), value: 2 },
      { attributes: outcome('rejected', 'open'), value: 2 },
      { attributes: outcome('rejected', 'half-open-busy'), value: 1 },
    ]);
    // The rejected call a fallback served is one of the two rejections above, and only there.
    expect(points(collected, 'circuit_breaker.fallbacks')).toEqual([
      { attributes: { ...payments, 'circuit_breaker.fallback.source': 'observable' }, value: 1 },
    ]);
    const transition = (from: string, to: string) => ({
      ...payments,
      'circuit_breaker.transition.from': from,
      'circuit_breaker.transition.to': to,
    });
    expect(points(collected, 'circuit_breaker.transitions')).toEqual([
      { attributes: transition('closed', 'open'), value: 1 },
      { attributes: transition('open', 'half-open'), value: 2 },
      { attributes: transition('half-open', 'open'), value: 1 },
      { attributes: transition('half-open', 'closed'), value: 1 },
    ]);
    expect(points(collected, 'circuit_breaker.probes')).toEqual([
      { attributes: { ...payments, 'circuit_breaker.probe.result': 'admitted' }, value: 2 },
      { attributes: { ...payments, 'circuit_breaker.probe.result': 'failed' }, value: 1 },
      { attributes: { ...payments, 'circuit_breaker.probe.result': 'succeeded' }, value: 1 },
    ]);
    // Recorded: 0.12, 0.04, 0.03 (the 429), 2, 0.02, 0.01, 60 (the expired probe), 0.06; not the released call.
    expect(points(collected, 'circuit_breaker.call.duration')).toEqual([
      {
        attributes: payments,
        value: {
          buckets: {
            boundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
            counts: [0, 1, 1, 2, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1],
          },
          count: 8,
          sum: 62.28,
          min: 0.01,
          max: 60,
        },
      },
    ]);
    expect(points(collected, 'circuit_breaker.window.calls')).toEqual([
      { attributes: payments, value: 0 },
    ]);
    expect(points(collected, 'circuit_breaker.window.failure_rate')).toEqual([
      { attributes: payments, value: 0 },
    ]);
  });

  it('uses a meter named after the package, and instruments with semantic-convention names, types and units', async () => {
    const { reader, meterProvider } = sdk();
    const clock = new ManualClock();
    const { registry } = await start(
      clock,
      { payments: { consecutiveFailures: 1, openDurationMs: 1_000 } },
      { meterProvider },
    );
    const breaker = registry.get('payments');
    await breaker.execute(rejecting(new Error('down'))).catch(swallow);
    clock.advance(1_000);
    await breaker.execute(ok);
    const { resourceMetrics } = await reader.collect();
    const { version } = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(resourceMetrics.scopeMetrics.map((s) => s.scope)).toEqual([
      { name: 'nestjs-circuit-breaker', version },
    ]);
    // As an exporter sees them: counters are monotonic sums, the state a non-monotonic sum (an up-down counter).
    const shape = (m: MetricData) => [
      m.descriptor.name,
      DataPointType[m.dataPointType],
      'isMonotonic' in m ? m.isMonotonic : undefined,
      m.descriptor.unit,
    ];
    expect(resourceMetrics.scopeMetrics[0]!.metrics.map(shape)).toEqual([
      ['circuit_breaker.calls', 'SUM', true, '{call}'],
      ['circuit_breaker.transitions', 'SUM', true, '{transition}'],
      ['circuit_breaker.probes', 'SUM', true, '{probe}'],
      ['circuit_breaker.call.duration', 'HISTOGRAM', undefined, 's'],
      ['circuit_breaker.state', 'SUM', false, '1'],
      ['circuit_breaker.window.failure_rate', 'GAUGE', undefined, '1'],
      ['circuit_breaker.window.calls', 'GAUGE', undefined, '{call}'],
      ['circuit_breaker.config.generation', 'GAUGE', undefined, '1'],
      ['circuit_breaker.config.info', 'GAUGE', undefined, '1'],
    ]);
  });

  it('describes every instrument truthfully', async () => {
    const { reader, meterProvider } = sdk();
    const clock = new ManualClock();
    const { registry } = await start(
      clock,
      { payments: { consecutiveFailures: 1, openDurationMs: 1_000 } },
      { meterProvider },
    );
    const breaker = registry.get('payments');
    await breaker.execute(rejecting(httpError(500))).catch(swallow);
    await firstValueFrom(
      of('fresh').pipe(circuitBreaker(breaker, { fallback: () => of('cached') })),
    );
    clock.advance(1_000);
    await breaker.execute(ok);
    const { resourceMetrics } = await reader.collect();
    expect(
      Object.fromEntries(
        resourceMetrics.scopeMetrics[0]!.metrics.map((m) => [
          m.descriptor.name,
          m.descriptor.description,
        ]),
      ),
    ).toEqual({
      'circuit_breaker.calls':
        'Calls through the circuit breaker, each counted once, by outcome: success, failure, timeout, overload, ignored, rejected (not attempted; circuit_breaker.rejection.reason says why). Fallbacks served are counted in circuit_breaker.fallbacks.',
      'circuit_breaker.fallbacks':
        'Calls answered by a fallback instead of their outcome (already counted in circuit_breaker.calls as rejected, failure, timeout or overload), by circuit_breaker.fallback.source: method, function, observable (the circuitBreaker() operator), lastGood.',
      'circuit_breaker.transitions': 'State changes of the circuit breaker.',
      'circuit_breaker.probes':
        'Half-open probe calls by result: admitted, then succeeded, failed, released (outcome ignored, permit returned) or abandoned (still in flight when their round ended).',
      'circuit_breaker.call.duration':
        'Duration of the calls the circuit breaker let through, whatever their outcome (success, failure, timeout, overload) except ignored.',
      'circuit_breaker.state':
        'Whether the circuit breaker is in this state (1) or not (0); open and isolated breakers reject every call, half-open ones all but their probes; metrics-only and disabled ones admit every call.',
      'circuit_breaker.window.failure_rate':
        'Failures (timeouts included) among the calls in the circuit breaker window, as a ratio from 0 to 1: the rate a failureRateThreshold opens on.',
      'circuit_breaker.window.calls':
        'Calls counted in the circuit breaker window (successes and failures, not overloads or ignored calls); no rate is judged below its minimum throughput.',
      'circuit_breaker.config.generation':
        'The generation of the circuit breaker options in force: 1 for the options first in force, one more for each reconfiguration, counted as it happens.',
      'circuit_breaker.config.info':
        'Always 1; its circuit_breaker.config.* attributes are the thresholds in force (window, failure_rate_threshold, minimum_throughput, consecutive_failures, slow_call_duration_ms, slow_call_rate_threshold, timeout_ms, open_duration_ms; absent when unset).',
    });
  });

  it('reports circuit_breaker.forced with the forced state while force() holds a breaker, and nothing otherwise', async () => {
    const { reader, meterProvider } = sdk();
    const { registry } = await start(new ManualClock(), { payments: {} }, { meterProvider });
    expect(points(await collect(reader), 'circuit_breaker.forced')).toEqual([]);
    registry.get('payments').force('closed', { reason: 'flaky but needed' });
    expect(points(await collect(reader), 'circuit_breaker.forced')).toEqual([
      { attributes: { ...payments, 'circuit_breaker.forced.state': 'metrics-only' }, value: 1 },
    ]);
  });

  it('reports circuit_breaker.bulkhead.calls for a breaker with a bulkhead, and its rejections by reason', async () => {
    const { reader, meterProvider } = sdk();
    const { registry } = await start(
      new ManualClock(),
      { inventory: { timeoutMs: false, bulkhead: { maxConcurrent: 1 } }, payments: {} },
      { meterProvider },
    );
    const inventory = registry.get('inventory');
    let release!: () => void;
    const running = inventory.execute(() => new Promise<void>((resolve) => (release = resolve)));
    await inventory.execute(() => 'refused').catch(swallow);
    const collected = await collect(reader);
    const name = { 'circuit_breaker.name': 'inventory' };
    expect(points(collected, 'circuit_breaker.bulkhead.calls')).toEqual([
      { attributes: { ...name, 'circuit_breaker.bulkhead.state': 'active' }, value: 1 },
      { attributes: { ...name, 'circuit_breaker.bulkhead.state': 'queued' }, value: 0 },
    ]);
    expect(
      points(collected, 'circuit_breaker.calls').filter(
        (point) => point.attributes['circuit_breaker.rejection.reason'] === 'bulkhead-full',
      ),
    ).toEqual([
      {
        attributes: {
          ...name,
          'circuit_breaker.outcome': 'rejected',
          'circuit_breaker.rejection.reason': 'bulkhead-full',
        },
        value: 1,
      },
    ]);
    release();
    await running;
  });

  it('reports each concurrency limiter: circuit_breaker.limit, .limit.requests and .limit.shed by criticality', async () => {
    const { reader, meterProvider } = sdk();
    const clock = new ManualClock();
    const { registry } = await start(clock, { payments: {} }, { meterProvider });
    registry.addLimiter(
      new ConcurrencyLimiter('api', { algorithm: 'fixed', initialLimit: 2 }, { clock }),
    );
    const api = registry.limiter('api');
    const permits = [api.tryAcquire(), api.tryAcquire()] as LimitPermit[];
    api.tryAcquire('sheddable');
    api.tryAcquire('sheddable');
    const collected = await collect(reader);
    const name = { 'circuit_breaker.name': 'api' };
    expect(points(collected, 'circuit_breaker.limit')).toEqual([{ attributes: name, value: 2 }]);
    expect(points(collected, 'circuit_breaker.limit.requests')).toEqual([
      { attributes: { ...name, 'circuit_breaker.limit.state': 'in_flight' }, value: 2 },
      { attributes: { ...name, 'circuit_breaker.limit.state': 'queued' }, value: 0 },
    ]);
    expect(points(collected, 'circuit_breaker.limit.shed')).toEqual(
      [
        ['critical-plus', 0],
        ['critical', 0],
        ['sheddable-plus', 0],
        ['sheddable', 2],
      ].map(([criticality, value]) => ({
        attributes: { ...name, 'circuit_breaker.criticality': criticality },
        value,
      })),
    );
    for (const permit of permits) permit.succeed();
  });

  it('counts circuit_breaker.retries by result', async () => {
    const { reader, meterProvider } = sdk();
    const { registry } = await start(
      new ManualClock(),
      { stock: { timeoutMs: false } },
      { meterProvider },
    );
    const policy = withRetry(registry.get('stock'), {
      attempts: 2,
      backoff: { initialMs: 0, jitter: 0 },
      budget: { ratio: 0, minPerSecond: 0.1 },
    });
    await policy.execute(rejecting(new Error('down'))).catch(swallow);
    await policy.execute(rejecting(new Error('down'))).catch(swallow);
    const stock = { 'circuit_breaker.name': 'stock' };
    expect(points(await collect(reader), 'circuit_breaker.retries')).toEqual([
      { attributes: { ...stock, 'circuit_breaker.retry.result': 'scheduled' }, value: 1 },
      { attributes: { ...stock, 'circuit_breaker.retry.result': 'budget-exhausted' }, value: 1 },
    ]);
  });

  it('counts circuit_breaker.health_checks by result', async () => {
    vi.useFakeTimers();
    try {
      const { reader, meterProvider } = sdk();
      const clock = new ManualClock();
      let up = false;
      const { registry } = await start(
        clock,
        {
          payments: {
            consecutiveFailures: 1,
            timeoutMs: false,
            healthCheck: {
              fn: async () => (up ? 'up' : Promise.reject(new Error('down'))),
              intervalMs: 100,
            },
          },
        },
        { meterProvider },
      );
      await registry
        .get('payments')
        .execute(rejecting(new Error('down')))
        .catch(swallow);
      for (const healthy of [false, true]) {
        up = healthy;
        clock.advance(100);
        await vi.advanceTimersByTimeAsync(100);
      }
      const name = { 'circuit_breaker.name': 'payments' };
      expect(points(await collect(reader), 'circuit_breaker.health_checks')).toEqual([
        { attributes: { ...name, 'circuit_breaker.health_check.result': 'failed' }, value: 1 },
        { attributes: { ...name, 'circuit_breaker.health_check.result': 'succeeded' }, value: 1 },
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('defaults to the global meter provider', async () => {
    const { reader, meterProvider } = sdk();
    otelMetrics.setGlobalMeterProvider(meterProvider);
    startApp.onCleanup(() => otelMetrics.disable());
    const { registry } = await start(new ManualClock(), { payments: {} });
    await registry.get('payments').execute(ok);
    const collected = await collect(reader);
    expect(points(collected, 'circuit_breaker.calls')).toEqual([
      { attributes: { ...payments, 'circuit_breaker.outcome': 'success' }, value: 1 },
    ]);
  });

  it('two applications share a provider; a closed application is no longer observed', async () => {
    const clock = new ManualClock();
    const { reader, meterProvider } = sdk();
    const first = await start(clock, { inventory: {} }, { meterProvider });
    const second = await start(clock, { shipping: {} }, { meterProvider });
    await first.registry.get('inventory').execute(ok);
    await second.registry.get('shipping').execute(ok);

    let collected = await collect(reader);
    expect(points(collected, 'circuit_breaker.window.calls')).toEqual([
      { attributes: { 'circuit_breaker.name': 'inventory' }, value: 1 },
      { attributes: { 'circuit_breaker.name': 'shipping' }, value: 1 },
    ]);

    await first.close();
    first.registry.get('inventory').isolate();
    await first.registry.get('inventory').execute(ok).catch(swallow);
    second.registry.get('shipping').isolate();
    collected = await collect(reader);
    // sdk-metrics 2.12 still exports the last value of a stream no callback observes any more
    // (open-telemetry/opentelemetry-js#4096), so only what happened after close() can tell.
    expect(points(collected, 'circuit_breaker.state')).toContainEqual({
      attributes: { 'circuit_breaker.name': 'shipping', 'circuit_breaker.state': 'isolated' },
      value: 1,
    });
    expect(points(collected, 'circuit_breaker.state')).not.toContainEqual({
      attributes: { 'circuit_breaker.name': 'inventory', 'circuit_breaker.state': 'isolated' },
      value: 1,
    });
    expect(points(collected, 'circuit_breaker.calls')).toEqual([
      {
        attributes: { 'circuit_breaker.name': 'inventory', 'circuit_breaker.outcome': 'success' },
        value: 1,
      },
      {
        attributes: { 'circuit_breaker.name': 'shipping', 'circuit_breaker.outcome': 'success' },
        value: 1,
      },
    ]);
  });

  it('counts the children of a per-key family under the family name, or with keyAttribute: true under their key', async () => {
    const run = async (keyAttribute: boolean) => {
      const clock = new ManualClock();
      const { reader, meterProvider } = sdk();
      const { registry } = await start(
        clock,
        { upstreams: { perKey: { maxKeys: 10 }, consecutiveFailures: 1 } },
        { meterProvider, keyAttribute },
      );
      const family = registry.get('upstreams');
      await family.forKey('a').execute(taking(clock, 15, ok));
      await family
        .forKey('b')
        .execute(rejecting(new Error('down')))
        .catch(swallow);
      await family.forKey('b').execute(ok).catch(swallow);
      return collect(reader);
    };
    const upstreams = { 'circuit_breaker.name': 'upstreams' };
    const keyA = { ...upstreams, 'circuit_breaker.key': 'a' };
    const keyB = { ...upstreams, 'circuit_breaker.key': 'b' };

    let collected = await run(false);
    expect(points(collected, 'circuit_breaker.state')).toEqual(stateOf(upstreams, 'closed'));
    expect(points(collected, 'circuit_breaker.calls')).toEqual([
      { attributes: { ...upstreams, 'circuit_breaker.outcome': 'success' }, value: 1 },
      { attributes: { ...upstreams, 'circuit_breaker.outcome': 'failure' }, value: 1 },
      {
        attributes: {
          ...upstreams,
          'circuit_breaker.outcome': 'rejected',
          'circuit_breaker.rejection.reason': 'open',
        },
        value: 1,
      },
    ]);

    collected = await run(true);
    expect(points(collected, 'circuit_breaker.state')).toEqual([
      ...stateOf(upstreams, 'closed'),
      ...stateOf(keyA, 'closed'),
      ...stateOf(keyB, 'open'),
    ]);
    expect(points(collected, 'circuit_breaker.window.calls')).toEqual([
      { attributes: upstreams, value: 0 },
      { attributes: keyA, value: 1 },
      { attributes: keyB, value: 0 },
    ]);
    expect(points(collected, 'circuit_breaker.calls')).toEqual([
      { attributes: { ...keyA, 'circuit_breaker.outcome': 'success' }, value: 1 },
      { attributes: { ...keyB, 'circuit_breaker.outcome': 'failure' }, value: 1 },
      {
        attributes: {
          ...keyB,
          'circuit_breaker.outcome': 'rejected',
          'circuit_breaker.rejection.reason': 'open',
        },
        value: 1,
      },
    ]);
    expect(points(collected, 'circuit_breaker.transitions')).toEqual([
      {
        attributes: {
          ...keyB,
          'circuit_breaker.transition.from': 'closed',
          'circuit_breaker.transition.to': 'open',
        },
        value: 1,
      },
    ]);
  });

  it('with keyAttribute: observed instruments report held children only; counters forget evicted keys only under delta temporality', async () => {
    // The OpenTelemetry API cannot forget an attribute set, so nothing here can remove an evicted child's counter
    // streams: under cumulative temporality the SDK keeps them (up to its cardinality limit), under delta it drops
    // every stream not recorded in the interval. This pins down what the README says.
    const clock = new ManualClock();
    const reader = new TestReader({
      aggregationTemporalitySelector: () => AggregationTemporality.DELTA,
    });
    const meterProvider = new MeterProvider({ readers: [reader] });
    startApp.onCleanup(() => meterProvider.shutdown());
    const { registry } = await start(
      clock,
      { hosts: { perKey: { maxKeys: 3 } } },
      { meterProvider, keyAttribute: true },
    );
    const hosts = registry.get('hosts');
    for (let i = 0; i < 50; i++) await hosts.forKey(`host-${i}`).execute(ok);
    const keysOf = (collected: Map<string, MetricData>, name: string) =>
      [
        ...new Set(points(collected, name).map((point) => point.attributes['circuit_breaker.key'])),
      ].sort();

    let collected = await collect(reader);
    expect(keysOf(collected, 'circuit_breaker.state')).toEqual([
      'host-47',
      'host-48',
      'host-49',
      undefined,
    ]);
    expect(keysOf(collected, 'circuit_breaker.calls')).toHaveLength(50);

    await hosts.forKey('host-49').execute(ok);
    collected = await collect(reader);
    expect(keysOf(collected, 'circuit_breaker.state')).toEqual([
      'host-47',
      'host-48',
      'host-49',
      undefined,
    ]);
    expect(keysOf(collected, 'circuit_breaker.calls')).toEqual(['host-49']);
  });

  it('reports a tenant outage in circuit_breaker.keys, and a reconfiguration in circuit_breaker.config.*, never per key', async () => {
    const clock = new ManualClock();
    const { reader, meterProvider } = sdk();
    const { registry } = await start(
      clock,
      { tenants: { perKey: { maxKeys: 10 }, consecutiveFailures: 1, timeoutMs: false } },
      { meterProvider, keyAttribute: true },
    );
    const family = registry.get('tenants');
    await family.forKey('acme').execute(ok);
    await family
      .forKey('initech')
      .execute(rejecting(new Error('down')))
      .catch(swallow);
    let collected = await collect(reader);
    const tenants = { 'circuit_breaker.name': 'tenants' };
    expect(points(collected, 'circuit_breaker.keys')).toEqual(
      ['closed', 'open', 'half-open', 'isolated', 'disabled', 'metrics-only'].map((state) => ({
        attributes: { ...tenants, 'circuit_breaker.state': state },
        value: state === 'closed' || state === 'open' ? 1 : 0,
      })),
    );
    expect(points(collected, 'circuit_breaker.config.generation')).toEqual([
      { attributes: tenants, value: 1 },
    ]);
    const info = {
      ...tenants,
      'circuit_breaker.config.window': 'count:100',
      'circuit_breaker.config.minimum_throughput': '20',
      'circuit_breaker.config.consecutive_failures': '1',
      'circuit_breaker.config.open_duration_ms': '10000',
    };
    expect(points(collected, 'circuit_breaker.config.info')).toEqual([
      { attributes: info, value: 1 },
    ]);

    await registry.control('tenants').reconfigure({ consecutiveFailures: 2 });
    collected = await collect(reader);
    expect(points(collected, 'circuit_breaker.config.generation')).toEqual([
      { attributes: tenants, value: 2 },
    ]);
    expect(points(collected, 'circuit_breaker.config.info')).toContainEqual({
      attributes: { ...info, 'circuit_breaker.config.consecutive_failures': '2' },
      value: 1,
    });
  });

  it('validates its options when the module is defined', () => {
    expect(() => CircuitBreakerTelemetryModule.forRoot({ provider: {} } as never)).toThrow(
      'CircuitBreakerTelemetryModule: unknown option "provider". Known options: meterProvider, keyAttribute, traces.',
    );
    expect(() => CircuitBreakerTelemetryModule.forRoot({ meterProvider: {} as never })).toThrow(
      'CircuitBreakerTelemetryModule: option "meterProvider" must be an OpenTelemetry MeterProvider (with getMeter()), got an object.',
    );
    expect(() => CircuitBreakerTelemetryModule.forRoot({ keyAttribute: 1 as never })).toThrow(
      'CircuitBreakerTelemetryModule: option "keyAttribute" must be a boolean, got 1.',
    );
  });
});
