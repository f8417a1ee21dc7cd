import type { LimitAlgorithmName } from '../limit/limit-options.js';

/**
 * A concurrency cap inside the breaker. Calls past the cap wait in a queue of
 * `maxQueue` (at most `queueTimeoutMs`, and never past the call's own
 * `timeoutMs` or the caller's abort); past that they are rejected with
 * reason `bulkhead-full` (code `BULKHEAD_FULL`). A full bulkhead says nothing
 * about the dependency: its rejections are never failures.
 *
 * The cap is fixed (`maxConcurrent`), or adaptive (`algorithm`): it then
 * follows the calls that hold a slot, in the words of a
 * `ConcurrencyLimitOptions` (`initialLimit`, `minLimit`, `maxLimit`), so one
 * object can configure an inbound limiter and an outbound bulkhead alike. A
 * call that succeeds reports how long it held its slot; a timeout or an
 * overload (a 429, a 503, a `Retry-After`) makes the cap back off; other
 * failures and ignored calls report nothing.
 *
 * @publicApi
 */
export interface BulkheadOptions {
  /** A fixed cap: how many calls may run at once. Required without `algorithm`, refused with it. */
  maxConcurrent?: number;
  /**
   * An adaptive cap, found by this algorithm instead of `maxConcurrent`:
   * `gradient` lowers it as latency rises above the latency measured without
   * load, `aimd` adds one while it is used and cuts it on a timeout or an
   * overload. Each breaker (each child of a per-key family) has its own.
   */
  algorithm?: Exclude<LimitAlgorithmName, 'fixed'>;
  /** With `algorithm`: the cap before any measurement. Default 20, within `minLimit` and `maxLimit`. */
  initialLimit?: number;
  /** With `algorithm`: the cap never goes below this. Default 1. */
  minLimit?: number;
  /** With `algorithm`: the cap never goes above this. Default 1000. */
  maxLimit?: number;
  /** How many calls may wait for a slot. Default 0 (reject at once). */
  maxQueue?: number;
  /** The longest a call waits in the queue. Default: the breaker's `timeoutMs`, else 10,000. */
  queueTimeoutMs?: number;
}

/**
 * Slow start after closing: for `durationMs` after a half-open round (or the
 * fleet, or a health check) closes the breaker, only a growing share of
 * calls is admitted, from `initialRatio` to all of them; the rest are
 * rejected with reason `ramp-up`. While ramping, a failure rate at or over
 * `failureRateThreshold` reopens at once, without waiting for
 * `minimumThroughput`.
 *
 * @publicApi
 */
export interface RampUpOptions {
  /** How long the ramp lasts. */
  durationMs: number;
  /** The share admitted at the start, in (0, 1]. Default 0.1. */
  initialRatio?: number;
}

/** What a health check is given: its own signal, aborted at its deadline. @publicApi */
export interface HealthCheckContext {
  readonly signal: AbortSignal;
  /** For a child of a per-key family: the key of the target to check. */
  readonly key: string | undefined;
}

/**
 * An active health check: while the breaker is open, `fn` (a check of the
 * dependency, never a user's call) runs every `intervalMs`; the first success moves the
 * breaker to half-open, or closes it with `onSuccess: 'closed'`. Never runs
 * while closed. Every breaker of a registry shares one timer.
 *
 * @publicApi
 */
export interface HealthCheckOptions {
  /** The health check. A rejection, or a result the breaker classifies as a failure, keeps the breaker open. */
  fn: (context: HealthCheckContext) => unknown;
  /** How often it runs while the breaker is open; the first run is `intervalMs` after opening. */
  intervalMs: number;
  /** Its deadline: a check still pending then counts as failed and its signal aborts. Default, and at most: `intervalMs`. */
  timeoutMs?: number;
  /** Where a success moves the breaker. Default `'half-open'` (live probes still decide). */
  onSuccess?: 'half-open' | 'closed';
}
