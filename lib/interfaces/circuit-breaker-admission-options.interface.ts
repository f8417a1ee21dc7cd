import type { ExecutionContext } from '@nestjs/common';

/**
 * A breaker `@RequireCircuitBreaker()` requires: its name, or its name and, for a
 * per-key breaker, the key of the request's target (without a key, a per-key
 * breaker's family gate is checked: it rejects every key while open).
 *
 * @publicApi
 */
export type CircuitBreakerRequirement =
  | string
  | {
      name: string;
      /** The target's key, from the request: a header, a route parameter, the host. `undefined` or `''` is `FAMILY_DEFAULT_KEY`. */
      key?: (context: ExecutionContext) => string | undefined;
    };

/** @publicApi */
export interface UseCircuitBreakerOptions {
  /**
   * For a per-key breaker (required then, refused otherwise): the key of the
   * request's target, read from the `ExecutionContext` (a header, a route
   * parameter, the host), so each tenant or host has its own child breaker.
   * A request without one (`undefined`, `null`, `''`) goes to the child of
   * `FAMILY_DEFAULT_KEY`; a key function that throws is reported once (per site) and
   * its requests go there too.
   */
  key?: (context: ExecutionContext) => string | undefined;
  /**
   * What the client gets instead whenever the breaker counts the handler's
   * call as rejected, failed, timed out or overloaded: a value, a Promise or
   * an Observable of one (or a throw, which the client gets). Errors the
   * breaker classifies as success or ignored (a 404) reach the client unchanged.
   */
  fallback?: (error: unknown, context: ExecutionContext) => unknown;
}
