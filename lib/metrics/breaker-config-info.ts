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
   * 1 for the options first seen, then one more each time the effective
   * options are seen changed (a reconfiguration, local or from the fleet): a
   * series whose value moves exactly when the options do.
   */
  readonly generation: number;
  /** The thresholds that matter, as label values (`''` when unset). */
  readonly labels: Readonly<Record<ConfigLabel, string>>;
}

interface Seen {
  config: ResolvedBreakerOptions;
  fingerprint: string;
  measured: MeasuredConfig;
}

// Per breaker, shared by both integrations, so that Prometheus and OpenTelemetry report the same generation.
const seen = new WeakMap<Breaker, Seen>();
// A function option (a classifier, a probe) has no text to compare: its identity stands for it.
const functionIds = new WeakMap<object, number>();
let nextFunctionId = 1;

/**
 * The config generation and thresholds of a breaker, as of now. Reading it
 * costs a comparison of references while the options are the ones last seen;
 * a reconfiguration replaces `breaker.config`, and only then are the options
 * compared as data (a reconfiguration to the same options is no new generation).
 *
 * @internal
 */
export function measureConfig(breaker: Breaker): MeasuredConfig {
  const config = breaker.config;
  const last = seen.get(breaker);
  if (last !== undefined && last.config === config) return last.measured;
  const fingerprint = fingerprintOf(config);
  if (last !== undefined && last.fingerprint === fingerprint) {
    last.config = config;
    return last.measured;
  }
  const measured: MeasuredConfig = Object.freeze({
    generation: last === undefined ? 1 : last.measured.generation + 1,
    labels: Object.freeze(labelsOf(config)),
  });
  seen.set(breaker, { config, fingerprint, measured });
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

/** The options as data: plain values by their JSON, functions by their identity. */
function fingerprintOf(config: ResolvedBreakerOptions): string {
  try {
    return JSON.stringify(config, (_, value: unknown) =>
      typeof value === 'function' ? `function#${identityOf(value)}` : value,
    );
  } catch {
    // Options that cannot be written out (a BigInt, a cycle): each new options object counts as a change.
    return `unreadable#${identityOf(config)}`;
  }
}

function identityOf(value: object): number {
  let id = functionIds.get(value);
  if (id === undefined) functionIds.set(value, (id = nextFunctionId++));
  return id;
}
