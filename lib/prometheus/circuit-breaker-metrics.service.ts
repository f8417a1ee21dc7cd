import {
  Inject,
  Injectable,
  Optional,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { CircuitBreakerModuleMissingError } from '../circuit-breaker-module-missing.error.js';
import { Counter, Histogram, register } from 'prom-client';
import { CircuitBreakerEvents } from '../circuit-breaker.events.js';
import { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type { CircuitBreakerEvent } from '../interfaces/circuit-breaker-event.interface.js';
import { MEASURED_EVENTS, MEASURED_LABEL_SETS, measure } from '../metrics/breaker-measurements.js';
import type { CircuitBreakerMetricsOptions } from './circuit-breaker-metrics-options.interface.js';
import {
  CALL_DURATION_BUCKETS,
  CIRCUIT_BREAKER_METRIC_NAMES as NAMES,
  CIRCUIT_BREAKER_METRICS_OPTIONS,
} from './circuit-breaker-metrics.constants.js';
import {
  registerGauges,
  type Labels,
  type MetricFactory,
  type MetricType,
} from './circuit-breaker-metrics.gauges.js';
import { circuitBreakerMetricsMessages } from './circuit-breaker-metrics.messages.js';

const MODULE = circuitBreakerMetricsMessages.module;
const HELP = circuitBreakerMetricsMessages.help;

type MetricRegistry = NonNullable<CircuitBreakerMetricsOptions['registry']>;

/** The metrics fed by events; the gauges feed themselves on each scrape. */
interface EventMetrics {
  calls: Counter<string>;
  fallbacks: Counter<string>;
  transitions: Counter<string>;
  probes: Counter<string>;
  retries: Counter<string>;
  healthChecks: Counter<string>;
  callDuration: Histogram<string>;
}

/**
 * The applications alive in this process, per metric registry and prefix.
 * Metrics are registered once per registry and shared by every application
 * that reports to it, so the gauges cannot belong to one application: on a
 * scrape they read every application still running. Keyed weakly by registry,
 * so a registry a test throws away takes its sets with it; the sets outlive
 * `registry.clear()`, so metrics registered again after it still see every
 * application.
 */
const liveApplications = new WeakMap<MetricRegistry, Map<string, Set<CircuitBreakerRegistry>>>();

/**
 * Feeds prom-client metrics from `CircuitBreakerEvents` (counters and
 * the duration histogram) and from breaker snapshots taken on each scrape (the
 * state and window gauges). Provided by `CircuitBreakerMetricsModule`.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerMetricsService implements OnModuleInit, OnModuleDestroy {
  private readonly live: Set<CircuitBreakerRegistry>;
  private readonly metrics: EventMetrics;
  private readonly keyLabel: boolean;
  private stop: (() => void) | undefined = undefined;

  private readonly breakers: CircuitBreakerRegistry;
  private readonly events: CircuitBreakerEvents;

  constructor(
    // Optional only to fail with a message naming the missing import, instead of Nest's "can't resolve dependencies".
    @Optional() @Inject(CircuitBreakerRegistry) breakers: CircuitBreakerRegistry | undefined,
    @Inject(CIRCUIT_BREAKER_METRICS_OPTIONS) options: CircuitBreakerMetricsOptions,
    @Optional() @Inject(CircuitBreakerEvents) events?: CircuitBreakerEvents,
  ) {
    if (breakers === undefined)
      throw new CircuitBreakerModuleMissingError(
        circuitBreakerMetricsMessages.moduleMissing(),
        MODULE,
      );
    this.breakers = breakers;
    // Built by hand with only a registry (tests, scripts): the registry's own events.
    this.events = events ?? breakers.events;
    const registry = options.registry ?? register;
    const prefix = options.prefix ?? '';
    this.keyLabel = options.keyLabel === true;
    this.live = liveApplicationsOf(registry, prefix);
    this.metrics = registerMetrics(registry, prefix, this.keyLabel, this.live);
  }

  onModuleInit(): void {
    this.live.add(this.breakers);
    // With a key label, the series of an evicted child must go with it, or maxKeys bounds nothing here.
    const forget = this.keyLabel
      ? (name: string, key: string) => this.forget(name, key)
      : undefined;
    this.stop = this.events.observe(MEASURED_EVENTS, (event) => this.record(event), forget);
  }

  // Before the registry's own shutdown, which disposes the breakers: a scrape in between must not report them.
  onModuleDestroy(): void {
    this.stop?.();
    this.stop = undefined;
    this.live.delete(this.breakers);
  }

  private record(event: CircuitBreakerEvent): void {
    const measurement = measure(event);
    if (measurement === undefined) return;
    const { calls, fallbacks, transitions, probes, retries, healthChecks, callDuration } =
      this.metrics;
    const id: Labels = this.keyLabel
      ? { name: event.breaker, key: event.key ?? '' }
      : { name: event.breaker };
    if (measurement.kind === 'call') {
      calls.inc({ ...id, outcome: measurement.outcome, reason: measurement.reason ?? '' });
      if (measurement.durationMs !== undefined)
        callDuration.observe(id, measurement.durationMs / 1000);
    } else if (measurement.kind === 'fallback') {
      fallbacks.inc({ ...id, source: measurement.source });
    } else if (measurement.kind === 'transition') {
      transitions.inc({ ...id, from: measurement.from, to: measurement.to });
    } else if (measurement.kind === 'retry') {
      retries.inc({ ...id, result: measurement.result });
    } else if (measurement.kind === 'healthCheck') {
      healthChecks.inc({ ...id, result: measurement.result });
    } else {
      probes.inc({ ...id, result: measurement.result });
    }
  }

  /** Removes every series of an evicted child from the event-fed metrics; the gauges drop it on their next scrape. */
  private forget(name: string, key: string): void {
    const { calls, fallbacks, transitions, probes, retries, healthChecks, callDuration } =
      this.metrics;
    for (const { outcome, reason } of MEASURED_LABEL_SETS.calls)
      calls.remove({ name, key, outcome, reason: reason ?? '' });
    for (const source of MEASURED_LABEL_SETS.fallbacks) fallbacks.remove({ name, key, source });
    for (const { from, to } of MEASURED_LABEL_SETS.transitions)
      transitions.remove({ name, key, from, to });
    for (const result of MEASURED_LABEL_SETS.probes) probes.remove({ name, key, result });
    for (const result of MEASURED_LABEL_SETS.retries) retries.remove({ name, key, result });
    for (const result of MEASURED_LABEL_SETS.healthChecks)
      healthChecks.remove({ name, key, result });
    callDuration.remove({ name, key });
  }
}

function liveApplicationsOf(registry: MetricRegistry, prefix: string): Set<CircuitBreakerRegistry> {
  let byPrefix = liveApplications.get(registry);
  if (byPrefix === undefined) liveApplications.set(registry, (byPrefix = new Map()));
  let live = byPrefix.get(prefix);
  if (live === undefined) byPrefix.set(prefix, (live = new Set()));
  return live;
}

/**
 * The metrics of one (registry, prefix), registered by the first application
 * and reused by the next: prom-client refuses a second metric of the same name.
 */
function registerMetrics(
  registry: MetricRegistry,
  prefix: string,
  keyLabel: boolean,
  live: Set<CircuitBreakerRegistry>,
): EventMetrics {
  const id = keyLabel ? ['name', 'key'] : ['name'];
  const registers = [registry];
  const metric = metricFactory(registry, prefix);
  registerGauges(metric, registers, id, live, keyLabel);
  const counter = (metricName: string, help: string, labels: string[]) =>
    metric(
      'counter',
      metricName,
      labels,
      (name, labelNames) => new Counter({ name, help, labelNames, registers }),
    );
  return {
    calls: counter(NAMES.calls, HELP.calls, [...id, 'outcome', 'reason']),
    fallbacks: counter(NAMES.fallbacks, HELP.fallbacks, [...id, 'source']),
    transitions: counter(NAMES.transitions, HELP.transitions, [...id, 'from', 'to']),
    probes: counter(NAMES.probes, HELP.probes, [...id, 'result']),
    retries: counter(NAMES.retries, HELP.retries, [...id, 'result']),
    healthChecks: counter(NAMES.healthChecks, HELP.healthChecks, [...id, 'result']),
    callDuration: metric(
      'histogram',
      NAMES.callDuration,
      id,
      (name, labelNames) =>
        new Histogram({
          name,
          help: HELP.callDuration,
          labelNames,
          buckets: [...CALL_DURATION_BUCKETS],
          registers,
        }),
    ),
  };
}

/**
 * Registers a metric under `prefix` in `registry`, or answers the one a
 * previous application registered there, if it has the same type and labels.
 */
function metricFactory(registry: MetricRegistry, prefix: string): MetricFactory {
  return <T>(
    type: MetricType,
    name: string,
    labelNames: string[],
    create: (name: string, labelNames: string[]) => T,
  ): T => {
    const fullName = prefix + name;
    const existing = registry.getSingleMetric(fullName) as unknown as
      { type?: string; labelNames?: readonly string[] } | undefined;
    if (existing === undefined) return create(fullName, labelNames);
    if (existing.type !== type || !sameLabels(existing.labelNames ?? [], labelNames)) {
      throw new Error(
        circuitBreakerMetricsMessages.conflictingMetric(
          fullName,
          describe(existing.type ?? 'unknown', existing.labelNames ?? []),
          `a ${describe(type, labelNames)}`,
        ),
      );
    }
    return existing as T;
  };
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((label) => b.includes(label));
}

const describe = circuitBreakerMetricsMessages.metricShape;
