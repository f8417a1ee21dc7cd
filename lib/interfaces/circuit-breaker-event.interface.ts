import type { BreakerEventMap, BreakerEventName } from '../core/index.js';

/**
 * One event of one breaker, tagged with the breaker's name (for a child of a
 * per-key family: the family's name, and the child's `key`), as
 * `CircuitBreakerEvents` (and `CircuitBreakerRegistry.events$`) emit it.
 *
 * @publicApi
 */
export type CircuitBreakerEvent = {
  [E in BreakerEventName]: { breaker: string; key?: string; type: E; payload: BreakerEventMap[E] };
}[BreakerEventName];
