import type { BreakerEventMap, BreakerEventName } from '../core/index.js';

/**
 * One event of one breaker, tagged with the breaker's name, as
 * `CircuitBreakerRegistry.events$` emits it.
 *
 * @publicApi
 */
export type CircuitBreakerEvent = {
  [E in BreakerEventName]: { breaker: string; type: E; payload: BreakerEventMap[E] };
}[BreakerEventName];
