import type { Breaker } from './breaker.js';
import type { StateChangeEvent } from './breaker-events.js';

/**
 * What lets breakers of several replicas act as one (shared state), without
 * the engine knowing where the shared state lives. Both methods are called on
 * the hot path's rare branches and must answer synchronously from local
 * knowledge: a coordinator may talk to a remote store, but never makes a call
 * wait for it.
 *
 * @publicApi
 */
export interface BreakerCoordinator {
  /** After every transition of `breaker` (its own, or adopted). */
  transitioned(breaker: Breaker, change: StateChangeEvent): void;
  /**
   * The open duration of `breaker` has ended: may this replica admit probes
   * now? `false` keeps it open (another replica holds the fleet's probe
   * permit, or it is being asked for); the coordinator later adopts the
   * verdict with `adoptClosed()` or `adoptOpen()`, or answers `true`.
   */
  mayProbe(breaker: Breaker): boolean;
}
