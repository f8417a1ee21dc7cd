import type {
  Breaker,
  BreakerOptions,
  ForcedMode,
  ForceOptions,
  ReconfiguredEvent,
} from './core/index.js';
import { isFleetScope } from './circuit-breaker.fleet.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import type {
  CircuitBreakerControl,
  CircuitBreakerFleetControl,
} from './interfaces/circuit-breaker-control.interface.js';
import type {
  FleetControl,
  FleetReconfigured,
  FleetWrite,
} from './interfaces/fleet-control.interface.js';

/**
 * What a control object acts through (the registry): its lookup, and its
 * orchestrator's reconfiguration (a patch over the definition) and fleet.
 *
 * @internal
 */
export interface ControlTarget {
  get(name: string): Breaker;
  readonly orchestrator: {
    readonly fleet: FleetControl | undefined;
    reconfigure(name: string, patch: BreakerOptions): ReconfiguredEvent;
  };
}

/**
 * `registry.control(name, scope?)`. Nothing is checked here: a bad scope, an
 * unknown name or a missing store is a rejection of the order, never a throw.
 *
 * @internal
 */
export function controlOf(
  target: ControlTarget,
  name: string,
  scope: unknown,
): CircuitBreakerControl | CircuitBreakerFleetControl {
  let fleetWide: boolean;
  try {
    fleetWide = isFleetScope(name, 'control', scope);
  } catch (error) {
    return refusedControl(name, error);
  }
  return fleetWide ? new FleetBreakerControl(name, target) : new LocalBreakerControl(name, target);
}

/** This replica only: the breaker's own control, or the module's reconfiguration, as a promise. */
class LocalBreakerControl implements CircuitBreakerControl {
  constructor(
    readonly name: string,
    private readonly target: ControlTarget,
  ) {}

  // `async`: whatever goes wrong is a rejection.
  async force(mode: ForcedMode, options: ForceOptions): Promise<void> {
    this.target.get(this.name).force(mode, options);
  }

  async release(): Promise<void> {
    this.target.get(this.name).release();
  }

  async reconfigure(patch: BreakerOptions): Promise<ReconfiguredEvent> {
    this.target.get(this.name);
    return this.target.orchestrator.reconfigure(this.name, patch);
  }
}

/** Every replica, through the store's orders (`FleetControl`). */
class FleetBreakerControl implements CircuitBreakerFleetControl {
  constructor(
    readonly name: string,
    private readonly target: ControlTarget,
  ) {}

  async force(mode: ForcedMode, options: ForceOptions): Promise<FleetWrite> {
    const [fleet, breaker] = this.reach('force');
    return fleet.force(breaker, mode, options);
  }

  async release(): Promise<FleetWrite> {
    const [fleet, breaker] = this.reach('release');
    return fleet.release(breaker);
  }

  async reconfigure(patch: BreakerOptions): Promise<FleetReconfigured> {
    const [fleet, breaker] = this.reach('reconfigure');
    return fleet.reconfigure(breaker, patch);
  }

  private reach(method: string): [FleetControl, Breaker] {
    const breaker = this.target.get(this.name);
    const fleet = this.target.orchestrator.fleet;
    if (fleet === undefined)
      throw new TypeError(circuitBreakerMessages.fleetNeedsStore(this.name, method));
    return [fleet, breaker];
  }
}

/** A control whose scope was not one: every order rejects with why. */
function refusedControl(name: string, error: unknown): CircuitBreakerFleetControl {
  const refuse = (): Promise<never> => Promise.reject(error);
  return { name, force: refuse, release: refuse, reconfigure: refuse };
}
