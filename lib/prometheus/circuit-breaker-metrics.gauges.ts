import { Gauge } from 'prom-client';
import type { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type { BreakerSnapshot } from '../core/index.js';
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
  metric(
    'gauge',
    NAMES.state,
    [...id, 'state'],
    (name, labelNames) =>
      new Gauge({
        name,
        help: HELP.state,
        labelNames,
        registers,
        collect() {
          // Series of breakers whose application has closed since the last scrape must go.
          this.reset();
          for (const [labels, snapshot] of liveSnapshots(live, keyLabel)) {
            for (const state of BREAKER_STATES)
              this.set({ ...labels, state }, snapshot.state === state ? 1 : 0);
          }
        },
      }),
  );
  metric(
    'gauge',
    NAMES.forced,
    [...id, 'state'],
    (name, labelNames) =>
      new Gauge({
        name,
        help: HELP.forced,
        labelNames,
        registers,
        collect() {
          // A series only while forced: most breakers never are, and an alert on == 1 needs no zeros.
          this.reset();
          for (const [labels, snapshot] of liveSnapshots(live, keyLabel)) {
            if (snapshot.forced !== undefined)
              this.set({ ...labels, state: snapshot.forced.state }, 1);
          }
        },
      }),
  );
  metric(
    'gauge',
    NAMES.shared,
    id,
    (name, labelNames) =>
      new Gauge({
        name,
        help: HELP.shared,
        labelNames,
        registers,
        collect() {
          // A series only for breakers that share: an alert on == 0 then means a store that stopped answering.
          this.reset();
          for (const [labels, snapshot] of liveSnapshots(live, keyLabel)) {
            if (snapshot.coordination !== undefined)
              this.set(labels, snapshot.coordination.shared ? 1 : 0);
          }
        },
      }),
  );
  metric(
    'gauge',
    NAMES.windowFailureRate,
    id,
    (name, labelNames) =>
      new Gauge({
        name,
        help: HELP.windowFailureRate,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const [labels, snapshot] of liveSnapshots(live, keyLabel))
            this.set(labels, snapshot.window.failureRate);
        },
      }),
  );
  metric(
    'gauge',
    NAMES.windowCalls,
    id,
    (name, labelNames) =>
      new Gauge({
        name,
        help: HELP.windowCalls,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const [labels, snapshot] of liveSnapshots(live, keyLabel))
            this.set(labels, snapshot.window.calls);
        },
      }),
  );
  metric(
    'gauge',
    NAMES.bulkheadCalls,
    [...id, 'state'],
    (name, labelNames) =>
      new Gauge({
        name,
        help: HELP.bulkheadCalls,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const [labels, { bulkhead }] of liveSnapshots(live, keyLabel)) {
            if (bulkhead === undefined) continue;
            this.set({ ...labels, state: 'active' }, bulkhead.active);
            this.set({ ...labels, state: 'queued' }, bulkhead.queued);
          }
        },
      }),
  );
  // Per family and per breaker, never per key: bounded by the number of breakers, whatever keyLabel says.
  metric(
    'gauge',
    NAMES.keys,
    ['name', 'state'],
    (fullName, labelNames) =>
      new Gauge({
        name: fullName,
        help: HELP.keys,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const breakers of live)
            for (const { name, states } of familyStatesOf(breakers))
              for (const state of BREAKER_STATES) this.set({ name, state }, states[state]);
        },
      }),
  );
  metric(
    'gauge',
    NAMES.configGeneration,
    ['name'],
    (fullName, labelNames) =>
      new Gauge({
        name: fullName,
        help: HELP.configGeneration,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const breakers of live)
            for (const { name, config } of configsOf(breakers))
              this.set({ name }, config.generation);
        },
      }),
  );
  metric(
    'gauge',
    NAMES.configInfo,
    ['name', ...CONFIG_LABELS],
    (fullName, labelNames) =>
      new Gauge({
        name: fullName,
        help: HELP.configInfo,
        labelNames,
        registers,
        collect() {
          // Reset on each scrape: the series of options no longer in force goes.
          this.reset();
          for (const breakers of live)
            for (const { name, config } of configsOf(breakers))
              this.set({ name, ...config.labels }, 1);
        },
      }),
  );
}
