/**
 * The breaker's only source of time. Injected so that every transition can be
 * tested by moving a number instead of sleeping.
 *
 * `now()` returns milliseconds. The default is the wall clock (`Date.now`) so
 * that `since` and `openUntil` in snapshots are readable timestamps and an
 * HTTP-date `Retry-After` can be compared with them.
 *
 * @publicApi
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: Date.now };

/** A source of uniform numbers in [0, 1): jitter and load shedding draw from it. */
export type RandomSource = () => number;
