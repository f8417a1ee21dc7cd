import type {
  Breaker,
  BreakerOptions,
  ForcedMode,
  ForceOptions,
  ReconfiguredEvent,
} from '../core/index.js';

/**
 * The scope of `registry.control(name, { fleet: true })`: its orders reach
 * every replica through the store.
 *
 * @publicApi
 */
export interface FleetScope {
  fleet: true;
}

/** What a fleet-wide order did in the store. @publicApi */
export interface FleetWrite {
  /** The breaker's name. */
  breaker: string;
  /** The order's generation: grows with every order of this breaker, fleet-wide. */
  generation: number;
  /**
   * How many subscriptions the signal reached: one per running replica, this
   * one included. A replica that missed it obeys at its next reconcile
   * (`reconcileIntervalMs`), and one that starts later obeys from its start.
   */
  subscribers: number;
}

/** What `registry.control(name, { fleet: true }).reconfigure(patch)` resolves with: what changed here, and the write. @publicApi */
export interface FleetReconfigured extends ReconfiguredEvent {
  fleet: FleetWrite;
}

/**
 * How a replica applies the fleet's reconfiguration of a breaker. The module
 * gives the store its own (a patch over the breaker's definition, checked as
 * start-up checks it); without the module, the store applies the patch with
 * `breaker.reconfigure(patch)` (the patch is then the breaker's whole options).
 * Plumbing between the registry and the store.
 *
 * @internal
 */
export interface FleetReconfigurer {
  /** Puts `patch` in force on this replica; throws (a `BreakerConfigError`) when it cannot. */
  apply(breaker: Breaker, patch: BreakerOptions): ReconfiguredEvent;
  /** The fleet's patch after `patch`: `previous` (every fleet patch so far) with `patch` over it. */
  merge(previous: BreakerOptions, patch: BreakerOptions): BreakerOptions;
}

/**
 * Orders to every replica of the fleet (`RedisBreakerStore.fleet`). Each is
 * obeyed here first, synchronously, whatever Redis does; the promise says
 * whether the other replicas were told: it rejects, naming the breaker, when
 * Redis cannot take the order (this replica still obeys it). The type of
 * `RedisBreakerStore.fleet`, exported by `nestjs-circuit-breaker/redis` only:
 * the fleet orders without Nest. Under Nest, `registry.control(name, { fleet: true })`
 * gives the same orders by name, through it.
 *
 * @publicApi
 */
export interface FleetControl {
  /** `breaker.force()` on every replica: stored, signalled, applied by replicas that start later, and ended everywhere at `untilMs`. */
  force(breaker: Breaker, state: ForcedMode | 'closed', options: ForceOptions): Promise<FleetWrite>;
  /** `breaker.release()` on every replica, of the force the fleet holds (a replica's own `force()` stays). */
  release(breaker: Breaker): Promise<FleetWrite>;
  /** Applies `patch` here, then on every replica (each checks it as its start-up would), and on every replica that starts later. */
  reconfigure(breaker: Breaker, patch: BreakerOptions): Promise<FleetReconfigured>;
  /** How this replica applies the fleet's reconfigurations (the module sets it). @internal */
  useReconfigurer(reconfigurer: FleetReconfigurer): void;
}
