import { Counter, Gauge } from 'prom-client';
import type { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type { BreakerSnapshot, ConcurrencyLimitSnapshot } from '../core/index.js';
import { CONFIG_LABELS, configsOf } from '../metrics/breaker-config-info.js';
import { familyStatesOf, snapshotsOf } from '../metrics/breaker-measurements.js';
import {
  BREAKER_STATES,
  CIRCUIT_BREAKER_METRIC_NAMES as NAMES,
} from './circuit-breaker-metrics.constants.js';
import { circuitBreakerMetricsMessages } from './circuit-breaker-metrics.messages.js';
import type { CircuitBreakerMetricsOptions } from './circuit-breaker-metrics-options.interface.js';

const HELP = circuitBreakerMetricsMessages.help;

/** @internal */
export type Labels = Record<string, string>;
/** @internal */
export type MetricType = 'counter' | 'gauge' | 'histogram';

/** Registers one metric, or answers the one a previous application registered under that name. @internal */
export type MetricFactory = <T>(
  type: MetricType,
  name: string,
  labelNames: string[],
  create: (name: string, labelNames: string[]) => T,
) => T;

/** Every breaker of every live application, children of per-key families too when they are labelled by key. */
function* liveSnapshots(
  live: Set<CircuitBreakerRegistry>,
  keyLabel: boolean,
): Generator<[Labels, BreakerSnapshot]> {
  for (const breakers of live) {
    for (const { name, key, snapshot } of snapshotsOf(breakers, keyLabel))
      yield [keyLabel ? { name, key: key ?? '' } : { name }, snapshot];
  }
}

/** A gauge: its name, help and labels, and what it writes on each scrape once its series are reset. */
interface GaugeDefinition {
  readonly name: string;
  readonly help: string;
  readonly labelNames: string[];
  readonly write: (gauge: Gauge) => void;
}

/**
 * The gauges, read from breaker snapshots on each scrape: every series is
 * written again then, so the series of a breaker whose application has
 * closed, or of an evicted child, go with it.
 *
 * @internal
 */
export function registerGauges(
  metric: MetricFactory,
  registers: NonNullable<CircuitBreakerMetricsOptions['registry']>[],
  id: string[],
  live: Set<CircuitBreakerRegistry>,
  keyLabel: boolean,
): void {
  const definitions = [
    ...stateGauges(id, () => liveSnapshots(live, keyLabel)),
    ...windowGauges(id, () => liveSnapshots(live, keyLabel)),
    ...familyGauges(live),
    ...limiterGauges(() => liveLimiters(live)),
  ];
  for (const { name: metricName, help, labelNames: labels, write } of definitions) {
    metric(
      'gauge',
      metricName,
      labels,
      (name, labelNames) =>
        new Gauge({
          name,
          help,
          labelNames,
          registers,
          collect() {
            // Series of breakers whose application has closed since the last scrape must go.
            this.reset();
            write(this);
          },
        }),
    );
  }
  registerShedCounter(metric, registers, () => liveLimiters(live));
}

type Snapshots = () => Iterable<[Labels, BreakerSnapshot]>;

/** Every concurrency limiter of every live application. */
function* liveLimiters(live: Set<CircuitBreakerRegistry>): Generator<ConcurrencyLimitSnapshot> {
  for (const registry of live) yield* registry.limiterSnapshots();
}

type LimiterSnapshots = () => Iterable<ConcurrencyLimitSnapshot>;

/** Each limiter's limit, and the requests holding or awaiting a place: per limiter, never per request. */
function limiterGauges(snapshots: LimiterSnapshots): GaugeDefinition[] {
  return [
    {
      name: NAMES.limit,
      help: HELP.limit,
      labelNames: ['name'],
      write: (gauge) => {
        for (const { name, limit } of snapshots()) gauge.set({ name }, limit);
      },
    },
    {
      name: NAMES.limitRequests,
      help: HELP.limitRequests,
      labelNames: ['name', 'state'],
      write: (gauge) => {
        for (const { name, inFlight, queued } of snapshots()) {
          gauge.set({ name, state: 'in_flight' }, inFlight);
          gauge.set({ name, state: 'queued' }, queued);
        }
      },
    },
  ];
}

/** The shed requests, a counter read from the limiters' own totals on each scrape (they only grow). */
function registerShedCounter(
  metric: MetricFactory,
  registers: NonNullable<CircuitBreakerMetricsOptions['registry']>[],
  snapshots: LimiterSnapshots,
): void {
  metric(
    'counter',
    NAMES.limitShed,
    ['name', 'criticality'],
    (name, labelNames) =>
      new Counter({
        name,
        help: HELP.limitShed,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const { name: limiter, shedBy } of snapshots())
            for (const [criticality, shed] of Object.entries(shedBy))
              this.inc({ name: limiter, criticality }, shed);
        },
      }),
  );
}

/** What state each breaker is in, whether it is forced, whether it shares its state. */
function stateGauges(id: string[], snapshots: Snapshots): GaugeDefinition[] {
  return [
    {
      name: NAMES.state,
      help: HELP.state,
      labelNames: [...id, 'state'],
      write: (gauge) => {
        for (const [labels, snapshot] of snapshots()) {
          for (const state of BREAKER_STATES)
            gauge.set({ ...labels, state }, snapshot.state === state ? 1 : 0);
        }
      },
    },
    {
      name: NAMES.forced,
      help: HELP.forced,
      labelNames: [...id, 'state'],
      // A series only while forced: most breakers never are, and an alert on == 1 needs no zeros.
      write: (gauge) => {
        for (const [labels, snapshot] of snapshots()) {
          if (snapshot.forced !== undefined)
            gauge.set({ ...labels, state: snapshot.forced.state }, 1);
        }
      },
    },
    {
      name: NAMES.shared,
      help: HELP.shared,
      labelNames: id,
      // A series only for breakers that share: an alert on == 0 then means a store that stopped answering.
      write: (gauge) => {
        for (const [labels, snapshot] of snapshots()) {
          if (snapshot.coordination !== undefined)
            gauge.set(labels, snapshot.coordination.shared ? 1 : 0);
        }
      },
    },
  ];
}

/** Each breaker's window, and its bulkhead's calls. */
function windowGauges(id: string[], snapshots: Snapshots): GaugeDefinition[] {
  return [
    {
      name: NAMES.windowFailureRate,
      help: HELP.windowFailureRate,
      labelNames: id,
      write: (gauge) => {
        for (const [labels, snapshot] of snapshots())
          gauge.set(labels, snapshot.window.failureRate);
      },
    },
    {
      name: NAMES.windowCalls,
      help: HELP.windowCalls,
      labelNames: id,
      write: (gauge) => {
        for (const [labels, snapshot] of snapshots()) gauge.set(labels, snapshot.window.calls);
      },
    },
    {
      name: NAMES.bulkheadCalls,
      help: HELP.bulkheadCalls,
      labelNames: [...id, 'state'],
      write: (gauge) => {
        for (const [labels, { bulkhead }] of snapshots()) {
          if (bulkhead === undefined) continue;
          gauge.set({ ...labels, state: 'active' }, bulkhead.active);
          gauge.set({ ...labels, state: 'queued' }, bulkhead.queued);
        }
      },
    },
  ];
}

/**
 * Per family and per breaker, never per key: bounded by the number of
 * breakers, whatever `keyLabel` says. The info series is reset on each
 * scrape, so the series of options no longer in force goes.
 */
function familyGauges(live: Set<CircuitBreakerRegistry>): GaugeDefinition[] {
  return [
    {
      name: NAMES.keys,
      help: HELP.keys,
      labelNames: ['name', 'state'],
      write: (gauge) => {
        for (const breakers of live)
          for (const { name, states } of familyStatesOf(breakers))
            for (const state of BREAKER_STATES) gauge.set({ name, state }, states[state]);
      },
    },
    {
      name: NAMES.configGeneration,
      help: HELP.configGeneration,
      labelNames: ['name'],
      write: (gauge) => {
        for (const breakers of live)
          for (const { name, config } of configsOf(breakers))
            gauge.set({ name }, config.generation);
      },
    },
    {
      name: NAMES.configInfo,
      help: HELP.configInfo,
      labelNames: ['name', ...CONFIG_LABELS],
      write: (gauge) => {
        for (const breakers of live)
          for (const { name, config } of configsOf(breakers))
            gauge.set({ name, ...config.labels }, 1);
      },
    },
  ];
}
