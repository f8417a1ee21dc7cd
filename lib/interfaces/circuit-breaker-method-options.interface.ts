import type { BreakerOptions, RetryOptions } from '../core/index.js';

/**
 * Serve the last successful result for the same arguments when the call is
 * rejected or fails, if it is younger than `maxAgeMs`; otherwise the caller
 * gets the call's own outcome (its error, or the value it returned). A cache without a freshness bound turns an outage into a
 * correctness problem that surfaces much later: the bound is required.
 *
 * @publicApi
 */
export interface LastGoodFallback {
  lastGood: {
    /** The oldest result that may still be served. */
    maxAgeMs: number;
    /** How many argument lists are remembered (least recently stored dropped first). Default 100. */
    maxEntries?: number;
    /** The cache key of a call's arguments. Default: `JSON.stringify(args)`. */
    key?: (...args: any[]) => string;
  };
}

/**
 * What runs instead whenever the breaker counts a call as rejected
 * (`CallRejectedError`), failed, timed out or overloaded, thrown or returned: a
 * returned value classified as a failure (a fetch `Response` with status 503)
 * is replaced too, and is the fallback's `error`. Never for outcomes
 * classified as success or ignored (a 400 still reaches the caller):
 * - the name of a method of the same class, called as `this[name](error, ...args)`;
 * - a function `(error, ...args)`, called with `this` the instance;
 * - `{ lastGood: { maxAgeMs, maxEntries } }`: the last good result, if fresh.
 *
 * @publicApi
 */
export type CircuitBreakerFallback =
  string | ((error: unknown, ...args: any[]) => unknown) | LastGoodFallback;

/**
 * Options of `@CircuitBreaker()`: how the method uses its breaker, plus any
 * breaker option. Breaker options here define the breaker; a breaker may have
 * its options set in one place only.
 *
 * @publicApi
 */
export interface CircuitBreakerMethodOptions extends BreakerOptions {
  /** The breaker's name. Default `ClassName.methodName`. */
  name?: string;
  fallback?: CircuitBreakerFallback;
  /** For a per-key breaker: the key of this call's target, from the method's arguments. `undefined` or `''` is `FAMILY_DEFAULT_KEY`. */
  key?: (...args: any[]) => string | undefined;
  /**
   * Breaker-aware retry of a method that returns a Promise (see `withRetry()`):
   * never a rejection by the breaker, only what its classification calls a
   * failure, after the dependency's `Retry-After`, within the breaker's retry
   * budget. A `fallback` answers once the retries are over.
   */
  retry?: RetryOptions;
}
