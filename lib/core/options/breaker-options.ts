import type { ErrorClassifier, ResultClassifier } from '../classify/classify.js';
import type {
  BulkheadOptions,
  RampUpOptions,
  HealthCheckOptions,
} from '../recovery/recovery-options.interface.js';

/** A ring buffer of the last `size` outcomes. @publicApi */
export interface CountWindowOptions {
  type: 'count';
  /** How many outcomes the window holds. Default 100. */
  size: number;
}

/** Outcomes of the last `durationMs`, summed over `buckets` slices. @publicApi */
export interface TimeWindowOptions {
  type: 'time';
  /** The span of the window. */
  durationMs: number;
  /** How many slices the span is cut into; older slices rotate out whole. Default 10. */
  buckets?: number;
}

/** @publicApi */
export type WindowOptions = CountWindowOptions | TimeWindowOptions;

/** @publicApi */
export interface HalfOpenOptions {
  /** How many probes one half-open period may admit. Default 1. */
  maxProbes?: number;
  /** How many probes may be in flight at once. Default 1. */
  maxConcurrent?: number;
  /** How many probes must succeed to close. Default: all of `maxProbes`. */
  successesToClose?: number;
  /** The deadline of a probe call. Default: `timeoutMs`. */
  probeTimeoutMs?: number;
  /** A probe still unsettled after this long counts as failed. Default: the probe timeout, else 60,000. */
  maxWaitMs?: number;
}

/** @publicApi */
export interface BackoffOptions {
  /** Each consecutive reopen multiplies the open duration by this. Default 1 (no growth). */
  multiplier?: number;
  /** The open duration never grows past this (before jitter). Default: no cap. */
  maxMs?: number;
}

/** Client-side throttling while the dependency reports overload. @publicApi */
export interface OverloadOptions {
  /**
   * The SRE `K`: calls are shed with probability
   * `max(0, (requests - k * accepts) / (requests + 1))` over the window. Default 2.
   */
  k?: number;
}

/** One child breaker per target (host, endpoint, tenant), bounded in number. @publicApi */
export interface PerKeyOptions {
  /** At most this many children; past it, idle closed children are evicted first (least recently used). Default 1,000. */
  maxKeys?: number;
  /** A closed child unused for this long is evicted. Default: only when `maxKeys` is reached. */
  idleMs?: number;
  /**
   * Keys longer than this (in UTF-16 code units) are stored in a bounded form
   * of at most this length: `…`, the start of the key, `…` and 32 hex digits
   * of a SHA-256 hash of the whole key, so distinct keys stay distinct
   * children. Keys that begin with `…` (U+2026) are stored that way too,
   * whatever their length: no caller can name a bounded key or the overflow
   * child. At least 64. Default 256.
   */
  maxKeyLength?: number;
}

/** The family as a breaker of its own, for failures that are not in any single target. @publicApi */
export interface AggregateOptions {
  /** Opens when at least this share of known targets is open (or half-open), in (0, 1]. */
  openWhenOpenRatio: number;
  /** ...and at least this many targets are known. Default 2. */
  minKeys?: number;
}

/** Sharing a breaker's state with the other replicas of the application. @publicApi */
export interface ShareOptions {
  /**
   * How many distinct replicas must report the breaker open (each within its
   * own open period) before the others adopt the open state: a number, or
   * `'auto'` (the default), which counts the replicas that report to the
   * store: 1 while at most two do (a fleet of two opens together), 2 from
   * three on (one replica with a network problem of its own cannot open the
   * fleet).
   */
  quorum?: number | 'auto';
}

/**
 * Everything a breaker can be told. Every option is validated when the breaker
 * is built.
 *
 * @publicApi
 */
export interface BreakerOptions {
  /** Which outcomes the failure rate is computed over. Default `{ type: 'count', size: 100 }`. */
  window?: WindowOptions;
  /** Opens when the failure rate in the window is at least this (0..1]. Default 0.5. */
  failureRateThreshold?: number;
  /** No rate is judged before the window holds this many counted calls. Default 20. */
  minimumThroughput?: number;
  /**
   * Opens after this many failures in a row. Default 10, beside the failure
   * rate rule: whichever trips first opens the breaker. Beside the rate rule,
   * ⌈N/2⌉ + 1 in a row (6 of 10) are enough when the window before them was
   * healthy (at least `minimumThroughput` calls, at most 10 % failed), and a
   * call admitted before the streak's first failing call (in flight when the
   * dependency went down) neither ends nor extends it. Given alone (without
   * `window`, `failureRateThreshold` or `minimumThroughput`) it is the only
   * trip rule, and counts every call as it ends. `false` turns it off,
   * leaving the rate rule alone.
   */
  consecutiveFailures?: number | false;
  /** A call that takes at least this long is slow, whether it succeeded or failed. */
  slowCallDurationMs?: number;
  /** Opens when the share of slow calls in the window is at least this (0..1]. Default 1 once `slowCallDurationMs` is set. */
  slowCallRateThreshold?: number;
  /**
   * The deadline of every asynchronous call: the call's signal aborts and it
   * fails with `CallTimeoutError`, a failure. Default 2,000 (2 s): a hung
   * dependency is the most common outage, and fetch and axios have no deadline
   * of their own. Set it above the dependency's slowest normal answer (its p99.9
   * or more) when that is longer. `false` turns it off; a synchronous result
   * never waits for it.
   */
  timeoutMs?: number | false;
  /** How long the breaker stays open before it admits probes. Default 10,000 (10 s). */
  openDurationMs?: number;
  /** Growth of the open duration on consecutive reopens. */
  backoff?: BackoffOptions;
  /** Each open duration is drawn from `[d × (1 − jitter), d × (1 + jitter)]`. Default 0. */
  jitter?: number;
  /** The longest `Retry-After` the breaker honours. Default 300,000. */
  maxRetryAfterMs?: number;
  /** The probe budget of the half-open state. */
  halfOpen?: HalfOpenOptions;
  /** How 429 and 503 + `Retry-After` are treated; `false` counts them as failures. Default `{ k: 2 }`. */
  overload?: false | OverloadOptions;
  /** Overrides the classification of rejected calls. */
  classify?: ErrorClassifier;
  /** Overrides the classification of resolved calls. */
  classifyResult?: ResultClassifier;
  /** Makes the breaker a family of per-key children: `breaker.forKey(key)`. */
  perKey?: PerKeyOptions;
  /** With `perKey`: the family opens for every key when enough keys are open. */
  aggregate?: AggregateOptions;
  /**
   * Shares the breaker's transitions with other replicas through the module's
   * `store` (see `nestjs-circuit-breaker/redis`). Default: shared when the
   * module has a store, local otherwise; `false` keeps this breaker local.
   * Per-key children always decide locally; their family is shared.
   */
  share?: boolean | ShareOptions;
  /** A concurrency cap whose rejections (`bulkhead-full`) are never failures. */
  bulkhead?: BulkheadOptions;
  /** Slow start after closing: a growing share of calls for `durationMs`. */
  rampUp?: RampUpOptions;
  /** An active health check while open, so recovery does not wait for user traffic. */
  healthCheck?: HealthCheckOptions;
}

/** @publicApi */
export const BREAKER_DEFAULTS = Object.freeze({
  windowSize: 100,
  timeWindowBuckets: 10,
  failureRateThreshold: 0.5,
  minimumThroughput: 20,
  openDurationMs: 10_000,
  timeoutMs: 2_000,
  consecutiveFailures: 10,
  maxProbes: 1,
  maxConcurrentProbes: 1,
  probeMaxWaitMs: 60_000,
  jitter: 0,
  maxRetryAfterMs: 300_000,
  overloadK: 2,
  slowCallRateThreshold: 1,
  maxKeys: 1_000,
  maxKeyLength: 256,
  aggregateMinKeys: 2,
  shareQuorum: 'auto' as const,
});
