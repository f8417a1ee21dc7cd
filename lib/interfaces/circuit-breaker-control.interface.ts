import type { BreakerOptions, ForcedMode, ForceOptions, ReconfiguredEvent } from '../core/index.js';
import type { FleetReconfigured, FleetWrite } from './fleet-control.interface.js';

/**
 * Manual control of one breaker by name, from `registry.control(name)`: this
 * replica only. Every method returns a promise, and every mistake (an unknown
 * name, an invalid option) is a rejection of it, never a throw: control is
 * written once, whether it acts here or on the whole fleet
 * (`registry.control(name, { fleet: true })`). The synchronous, local forms
 * stay on the breaker itself (`registry.get(name).force(...)`).
 *
 * @publicApi
 */
export interface CircuitBreakerControl {
  /** The breaker's name. */
  readonly name: string;
  /**
   * Holds the breaker in one mode (`breaker.force()`): `open` (state
   * `isolated`) rejects every call, `metrics-only` lets every call through and
   * counts it without tripping, `disabled` lets every call through and counts
   * nothing; until `release()` or `untilMs`.
   */
  force(mode: ForcedMode, options: ForceOptions): Promise<void>;
  /** Ends a `force()` (`breaker.release()`): back to closed with an empty window. */
  release(): Promise<void>;
  /**
   * Puts `patch` in force over the options the breaker was defined with (over
   * the module's defaults), checked as start-up checks them, applied whole or
   * not at all; resolves with what changed and what started afresh.
   */
  reconfigure(patch: BreakerOptions): Promise<ReconfiguredEvent>;
}

/**
 * Manual control of one breaker on every replica, from
 * `registry.control(name, { fleet: true })` with a store that carries orders
 * (`RedisBreakerStore`): each order is obeyed here at once, then stored and
 * signalled, so that every replica obeys, and every replica that starts
 * later. Each promise resolves once the store took the order, and rejects
 * with a `FleetOrderError` naming the breaker when it cannot (this replica
 * still obeys; the others were not told).
 *
 * @publicApi
 */
export interface CircuitBreakerFleetControl {
  /** The breaker's name. */
  readonly name: string;
  /** `force()` here, then on every replica; ended everywhere by `release()` or at `untilMs` (a wall-clock time, each replica by itself). */
  force(mode: ForcedMode, options: ForceOptions): Promise<FleetWrite>;
  /** Ends the fleet's force here and on every replica (a replica's own `force()` stays). */
  release(): Promise<FleetWrite>;
  /** `patch` here, then on every replica (each checks it as its own start-up would); plain data only. */
  reconfigure(patch: BreakerOptions): Promise<FleetReconfigured>;
}
