import { httpStatusOf, isCallRejected } from './core/index.js';

/** The status that says "too slow": a gateway timeout. */
const TIMEOUT_STATUS = 504;

/**
 * Whether a handler's error is a sign that this service is doing too much at
 * once, for its limit to back off (`LimitPermit.drop()`): a timeout (a
 * breaker's `CallTimeoutError`, RxJS's or `AbortSignal.timeout()`'s
 * `TimeoutError`, an HTTP 504), or a refusal by this process's own
 * concurrency caps (a breaker's full bulkhead, another limiter's shed). Any
 * other error is no measure of the service's capacity, and only frees the
 * place: above all an open circuit's refusal, which fails fast because a
 * dependency is down (counted as overload, it cut the limit to 1 in 60 fast
 * refusals, and routes that never call that dependency were shed), and a
 * 429 or 503 passed on from a dependency (its overload, not this service's).
 *
 * @internal
 */
export function isOverloadSign(error: unknown): boolean {
  if (isCallRejected(error)) return error.reason === 'bulkhead-full' || error.reason === 'shed';
  if (typeof error !== 'object' || error === null) return false;
  try {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (code === 'CALL_TIMEOUT' || name === 'TimeoutError') return true;
  } catch {
    return false;
  }
  return httpStatusOf(error) === TIMEOUT_STATUS;
}
