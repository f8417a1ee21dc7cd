/**
 * How a limiter's limit follows the service: a state object that takes the
 * measurement of each request that ends and answers the limit now. It does
 * no timing of its own (the limiter measures) and no work beyond O(1) per
 * sample.
 *
 * @internal
 */
export interface LimitAlgorithm {
  /** How many requests may run at once now: an integer in [minLimit, maxLimit]. */
  readonly limit: number;
  /**
   * One request ended. `startedAt`: when it took its place (the limiter's
   * monotonic clock, ms); `rttMs`: how long it held it; `inFlight`: how many
   * held a place when it took its own, itself included; `dropped`: an
   * overload sign (it timed out, or something it called refused it for
   * overload).
   */
  sample(startedAt: number, rttMs: number, inFlight: number, dropped: boolean): void;
}
