import type { ExecutionContext } from '@nestjs/common';
import type { Criticality } from '../core/index.js';

/**
 * What `@ConcurrencyLimit(name?, options)` is given besides the limiter's name.
 *
 * @publicApi
 */
export interface ConcurrencyLimitMethodOptions {
  /** The criticality of the requests of this route (or of every route of the class): see `@Criticality()`. */
  criticality?: Criticality;
}

/**
 * How `ConcurrencyLimitInterceptor` reads a request's criticality, in
 * `CircuitBreakerModule.forRoot()`. The first answer wins: `criticalityOf`,
 * then the header, then the route's metadata (`@Criticality()`,
 * `@ConcurrencyLimit(name, { criticality })`), then `'critical'`.
 *
 * @publicApi
 */
export interface CriticalityOptions {
  /**
   * A request header that carries the criticality (`'x-criticality'`): one of
   * the four names, in any case. A missing or unknown value falls through to
   * the route's metadata; it is never an error to the client. Only set it when
   * the callers that may send it are trusted (a gateway sets or strips it):
   * any client can ask for `critical-plus`.
   */
  criticalityHeader?: string;
  /**
   * The criticality of a request, from its `ExecutionContext` (a user's plan, a
   * caller's identity); `undefined` falls through to the header. It must not
   * throw: a throw is reported once and the request falls through.
   */
  criticalityOf?: (context: ExecutionContext) => Criticality | undefined;
}
