import type { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type { Breaker, ResolvedBreakerOptions } from '../core/index.js';

/**
 * The options an operator compares over time and across replicas, as the
 * labels (Prometheus) or attributes (OpenTelemetry) of the config info
 * series: what decides when a breaker opens and for how long. One series per
 * breaker, never per key (a family's children run on its options), so the
 * cardinality is the number of breakers.
 *
 * @internal
 */
export const CONFIG_LABELS = [
  'window',
  'failure_rate_threshold',
  'minimum_throughput',
  'consecutive_failures',
  'slow_call_duration_ms',
  'slow_call_rate_threshold',
  'timeout_ms',
  'open_duration_ms',
] as const;

/** @internal */
export type ConfigLabel = (typeof CONFIG_LABELS)[number];

/** What the metric integrations report of a breaker's options. @internal */
export interface MeasuredConfig {
  /**
   * 1 for the options first in force, then one more for each `reconfigure()`
   * that put options in force (local, from the fleet, a reload): the engine
   * counts them as they happen, so a change undone between two scrapes
   * (A, B, then A again) still moves the series.
   */
  readonly generation: number;
  /** The thresholds that matter, as label values (`''` when unset). */
  readonly labels: Readonly<Record<ConfigLabel, string>>;
}

interface Seen {
  config: ResolvedBreakerOptions;
  reconfigurations: number;
  measured: MeasuredConfig;
}

// Per breaker, shared by both integrations, so that Prometheus and OpenTelemetry report the same generation.
const seen = new WeakMap<Breaker, Seen>();

/**
 * The config generation and thresholds of a breaker, as of now. Reading it
 * costs two comparisons while nothing was reconfigured since it was last read.
 *
 * @internal
 */
export function measureConfig(breaker: Breaker): MeasuredConfig {
  const config = breaker.config;
  const reconfigurations = breaker.reconfigurations;
  const last = seen.get(breaker);
  if (last !== undefined && last.reconfigurations === reconfigurations && last.config === config)
    return last.measured;
  const measured: MeasuredConfig = Object.freeze({
    generation: reconfigurations + 1,
    labels: Object.freeze(labelsOf(config)),
  });
  seen.set(breaker, { config, reconfigurations, measured });
  return measured;
}

/** The breakers of an application with their measured options (the families' own; children share them). @internal */
export function* configsOf(
  registry: CircuitBreakerRegistry,
): Generator<{ name: string; config: MeasuredConfig }> {
  for (const name of registry.list()) yield { name, config: measureConfig(registry.get(name)) };
}

function labelsOf(c: ResolvedBreakerOptions): Record<ConfigLabel, string> {
  const w = c.window;
  return {
    window: w.type === 'count' ? `count:${w.size}` : `time:${w.durationMs}ms`,
    failure_rate_threshold: c.rateRule ? String(c.failureRateThreshold) : '',
    minimum_throughput: String(c.minimumThroughput),
    consecutive_failures: text(c.consecutiveFailures),
    slow_call_duration_ms: text(c.slowCallDurationMs),
    slow_call_rate_threshold: text(c.slowCallRateThreshold),
    timeout_ms: text(c.timeoutMs),
    open_duration_ms: String(c.openDurationMs),
  };
}

function text(value: number | undefined): string {
  return value === undefined ? '' : String(value);
}
