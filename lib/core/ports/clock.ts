/**
 * The breaker's only source of time. Injected so that every transition can be
 * tested by moving a number instead of sleeping.
 *
 * Two readings, both in milliseconds:
 * - `now()` is wall time (ms since the epoch): the timestamps shown to people
 *   (`since`, `openUntil`, event times), an HTTP-date `Retry-After`, and the
 *   open-until times replicas share.
 * - `monotonic()` never goes back: every duration (the open period, probe
 *   deadlines, windows, throttling pauses, idle eviction) runs on it, so an
 *   NTP correction or a resumed VM cannot keep a breaker open for the size of
 *   the step.
 *
 * A clock without `monotonic()` drives both with `now()`: a test clock that
 * only moves forward needs nothing more. To test a wall-clock step, give both.
 *
 * @publicApi
 */
export interface Clock {
  now(): number;
  monotonic?(): number;
  /**
   * Runs `callback` once `delayMs` have passed on this clock's monotonic
   * reading, and returns the function that cancels it. Optional: a clock that
   * has it also drives its breakers' per-call deadlines (`timeoutMs`,
   * `halfOpen.probeTimeoutMs`), bulkhead queue timeouts
   * (`bulkhead.queueTimeoutMs`) and injected latency, so that a test moves
   * them with the rest of time (the manual clock of
   * `nestjs-circuit-breaker/testing` has it). Without it, those wait on the
   * process's timers, in real time, whatever the clock reads.
   */
  setTimer?(callback: () => void, delayMs: number): () => void;
}

// performance.now() counts from the process's start; the time origin makes
// the monotonic reading look like wall time until the first clock step, which
// keeps internal times readable when debugging.
const origin = performance.timeOrigin;

export const systemClock: Clock = {
  now: Date.now,
  monotonic: () => Math.floor(origin + performance.now()),
};

/** A source of uniform numbers in [0, 1): jitter and load shedding draw from it. */
export type RandomSource = () => number;

/** @internal The reading durations run on: `monotonic()` where the clock has one. */
export function monotonicOf(clock: Clock): () => number {
  if (clock === systemClock) return systemClock.monotonic!;
  return typeof clock.monotonic === 'function' ? () => clock.monotonic!() : () => clock.now();
}
