import type { CallTimeoutError, CallRejectedError } from '../core/index.js';

/**
 * How `CircuitBreakerExceptionFilter` (and `toHttpResponse()`) answer a
 * rejected or timed-out call. `httpFilter: true` is `{}`.
 *
 * @publicApi
 */
export interface CircuitBreakerHttpOptions {
  /**
   * Add the breaker's name, the rejection reason, `retryAfterMs` and
   * `timeoutMs` to the body. Default `false`: breaker names are internal
   * architecture, and an API exposed to the public should not list them.
   */
  details?: boolean;
  /**
   * Builds the whole body, for applications that have their own error
   * envelope. `status` is 503 for a `CallRejectedError`, 504 for a
   * `CallTimeoutError`. Returning `undefined` sends the default body. The
   * status and `Retry-After` header are set by the filter whatever it returns.
   * Cannot be combined with `details` (the factory decides what to show).
   */
  body?: (error: CallRejectedError | CallTimeoutError, status: 503 | 504) => unknown;
}
