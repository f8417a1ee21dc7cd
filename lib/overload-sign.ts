import { httpStatusOf, isCallRejected } from './core/index.js';

/** The statuses that say "overloaded, or too slow": too many requests, unavailable, gateway timeout. */
const OVERLOAD_STATUSES = new Set([429, 503, 504]);

/**
 * Whether a handler's error is a sign of overload, for the limit to back off
 * (`LimitPermit.drop()`): a refusal of an outbound breaker or limiter
 * (`CallRejectedError`), a timeout (a breaker's `CallTimeoutError`, RxJS's
 * or `AbortSignal.timeout()`'s `TimeoutError`), or an HTTP error with status
 * 429, 503 or 504 (an `HttpException`, an upstream's error). Any other error
 * is no measure of the service's capacity.
 *
 * @internal
 */
export function isOverloadSign(error: unknown): boolean {
  if (isCallRejected(error)) return true;
  if (typeof error !== 'object' || error === null) return false;
  try {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (code === 'CALL_TIMEOUT' || name === 'TimeoutError') return true;
  } catch {
    return false;
  }
  const status = httpStatusOf(error);
  return status !== undefined && OVERLOAD_STATUSES.has(status);
}
