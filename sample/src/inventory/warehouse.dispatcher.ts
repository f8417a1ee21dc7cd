import type { FactoryProvider } from '@nestjs/common';
import { CircuitBreakerRegistry } from 'nestjs-circuit-breaker';
import { withCircuitBreaker } from 'nestjs-circuit-breaker/undici';
import { Agent, type Dispatcher } from 'undici';

/** The undici dispatcher the inventory's fetch calls go through. */
export const WAREHOUSE_DISPATCHER = Symbol('WAREHOUSE_DISPATCHER');

/**
 * Every request of this dispatcher goes through the `inventory` family: one
 * child per origin (`http://127.0.0.1:<port>`), so a hung warehouse opens its
 * own child and the others go on.
 */
export const warehouseDispatcher: FactoryProvider<Dispatcher> = {
  provide: WAREHOUSE_DISPATCHER,
  useFactory: (registry: CircuitBreakerRegistry) =>
    withCircuitBreaker(new Agent(), { breaker: registry.get('inventory') }),
  inject: [CircuitBreakerRegistry],
};
