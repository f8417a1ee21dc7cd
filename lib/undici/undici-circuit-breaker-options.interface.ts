import type { Dispatcher } from 'undici';
import type { Breaker } from '../core/index.js';

/**
 * What `withCircuitBreaker()` takes.
 *
 * @publicApi
 */
export interface UndiciCircuitBreakerOptions {
  /**
   * The breaker every request of the dispatcher goes through. A per-key
   * family (`perKey: { maxKeys }`) gives each origin its own child, keyed
   * `protocol//host:port`.
   */
  breaker: Breaker;
  /**
   * The key of a request on a per-key family, instead of its origin;
   * `undefined` sends the request to the family's default key. Only with a
   * per-key family.
   */
  key?: (request: Dispatcher.DispatchOptions) => string | undefined;
  /** Requests for which it answers `true` bypass the breaker: not admitted, not counted. */
  skip?: (request: Dispatcher.DispatchOptions) => boolean;
  /**
   * The deadline of a request in milliseconds, instead of the breaker's
   * `timeoutMs` (a report that takes long, a health check that must be
   * quick); `undefined`: the breaker's. `false` (none) only on a breaker
   * built with `timeoutMs: false`. A value the breaker refuses errors the
   * request, which is not sent.
   */
  timeoutMs?: (request: Dispatcher.DispatchOptions) => number | false | undefined;
  /**
   * How much of the body of a response counted as a failure (5xx, 429...) is
   * read for the caller at once, whether the caller reads it or not, so that
   * an unread error body does not hold its connection. Past it the request
   * is aborted and the caller's read of the body fails. Default 65 536 bytes;
   * `0` leaves failure bodies to the caller's own pace.
   */
  failureBodyLimit?: number;
}

/**
 * What the breaker's classifier sees of a response: its status line and
 * headers, when they arrive (the body is not waited for).
 *
 * @publicApi
 */
export interface UndiciResponseHead {
  readonly status: number;
  readonly statusText: string | undefined;
  /** Lower-case names, as undici parses them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}
