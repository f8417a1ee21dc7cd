import type { BreakerSnapshot, BreakerState, TransitionReason } from '../core/index.js';

/**
 * What the dashboard's stream pushes (event `snapshot`) and `<path>/state`
 * answers: every breaker of the application at one instant.
 *
 * @publicApi
 */
export interface DashboardState {
  /** When it was taken, on the breakers' clock (the module's `clock`, `Date.now()` by default). */
  at: number;
  breakers: DashboardBreaker[];
  /** With a module `store` (shared state): what this replica knows of its sharing. */
  fleet?: DashboardFleet;
}

/** One tile. @publicApi */
export interface DashboardBreaker {
  snapshot: BreakerSnapshot;
  /** For a per-key family: the children that fail most (open ones first, then by failure rate). */
  topChildren?: DashboardChild[];
  /**
   * For a per-key family: its children's calls summed with its own (the
   * family's snapshot counts only what its gate rejected and the fallbacks it
   * served). Evicted children leave the sums.
   */
  aggregate?: DashboardAggregate;
}

/** A family's calls over the children it holds. @publicApi */
export interface DashboardAggregate {
  admitted: number;
  rejected: number;
  fallbacks: number;
  /** The children's windows, summed. */
  windowCalls: number;
  windowFailures: number;
  windowSlowCalls: number;
}

/** A child of a per-key family, as its family's tile lists it. @publicApi */
export interface DashboardChild {
  key: string;
  state: BreakerState;
  failureRate: number;
  calls: number;
  failures: number;
  rejected: number;
  retryAfterMs: number | undefined;
}

/**
 * What this replica knows of the fleet through its store. The store does not
 * list the other replicas nor publish their snapshots, so this is one
 * replica's view: whether sharing works from here, and how many breakers share.
 *
 * @publicApi
 */
export interface DashboardFleet {
  /** This replica's name in the quorum (`RedisBreakerStore.instanceId`), when the store has one. */
  instanceId?: string;
  /** Whether the store reaches the other replicas now (`RedisBreakerStore.shared`), when it says. */
  shared?: boolean;
  /** The store's failed or timed-out operations since start. */
  storeErrors?: number;
  /** Transitions the store's bounded queue dropped before writing them. */
  droppedWrites?: number;
  /** Breakers that share their state through the store, and those that share it now. */
  sharingBreakers: number;
  sharedNow: number;
}

/** Event `transitions`: state changes as they happen, with the tiles they change. @publicApi */
export interface DashboardTransitions {
  at: number;
  transitions: DashboardTransition[];
  /** Transitions left out of `transitions` (a storm of per-key children); the tiles are up to date all the same. */
  omitted: number;
  breakers: DashboardBreaker[];
}

/** @publicApi */
export interface DashboardTransition {
  breaker: string;
  key?: string;
  from: BreakerState;
  to: BreakerState;
  reason: TransitionReason;
  at: number;
}
