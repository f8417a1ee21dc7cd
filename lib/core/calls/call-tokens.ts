/** @internal The start of a call admitted while nobody needed its duration. */
export const NOT_TIMED = Number.NaN;

/** @internal The token of a call the breaker lets through without recording it (`disabled`). */
// Negative like a probe's token, so that the plain path (tokens >= 0) never has to test for it; no probe id is a fraction.
export const UNCOUNTED = -0.5;
