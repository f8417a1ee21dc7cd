import type { BreakerStore } from './core/index.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import type { FleetControl } from './interfaces/fleet-control.interface.js';

/**
 * The store's orders to every replica (`store.fleet`), if it has them: the
 * root entry never imports a store, so it knows one by its shape.
 *
 * @internal
 */
export function fleetOf(store: BreakerStore | undefined): FleetControl | undefined {
  const fleet = (store as { fleet?: Partial<FleetControl> } | undefined)?.fleet;
  return typeof fleet?.force === 'function' &&
    typeof fleet.release === 'function' &&
    typeof fleet.reconfigure === 'function' &&
    typeof fleet.useReconfigurer === 'function'
    ? (fleet as FleetControl)
    : undefined;
}

/**
 * Whether the last argument of a registry method asks for the whole fleet:
 * `{ fleet: true }`; left out (or `{ fleet: false }`) is this replica only;
 * anything else is a `TypeError`, never a silent local order.
 *
 * @internal
 */
export function isFleetScope(name: string, method: string, scope: unknown): boolean {
  if (scope === undefined) return false;
  const fleet = (scope as { fleet?: unknown } | null)?.fleet;
  if (
    typeof scope !== 'object' ||
    scope === null ||
    typeof fleet !== 'boolean' ||
    Object.keys(scope).some((key) => key !== 'fleet')
  )
    throw new TypeError(circuitBreakerMessages.badFleetScope(name, method, scope));
  return fleet;
}
