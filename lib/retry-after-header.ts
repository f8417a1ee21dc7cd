/**
 * The longest wait the filter, the guard and the other transports announce:
 * one day. A breaker forced open for a week still answers `Retry-After:
 * 86400`; the client asks again then, and is told again.
 *
 * @internal
 */
export const MAX_ANNOUNCED_RETRY_AFTER_MS = 86_400_000;

/**
 * A rejection's `retryAfterMs` as it may be announced to a client: whole
 * milliseconds in [0, one day], or `undefined` when it is no estimate (absent,
 * not a number, NaN). Infinity and anything past a day is the day; below zero
 * is 0. An estimate read from a broken upstream hint (`1e+297`) must never
 * reach a header that clients `parseInt`.
 *
 * @internal
 */
export function announcedRetryAfterMs(ms: unknown): number | undefined {
  if (typeof ms !== 'number' || Number.isNaN(ms)) return undefined;
  return Math.min(MAX_ANNOUNCED_RETRY_AFTER_MS, Math.max(0, Math.ceil(ms)));
}

/** The `Retry-After` value (delta-seconds, rounded up) for an estimate, or `undefined` for none. @internal */
export function retryAfterHeader(ms: unknown): string | undefined {
  const announced = announcedRetryAfterMs(ms);
  return announced === undefined ? undefined : String(Math.ceil(announced / 1000));
}
