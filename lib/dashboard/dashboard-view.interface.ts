import type {
  BreakerSnapshot,
  BreakerState,
  ConcurrencyLimitSnapshot,
  TransitionEvidence,
  TransitionReason,
} from '../core/index.js';
import type { FleetView } from '../interfaces/fleet-view.interface.js';

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
  /** In an application with concurrency limiters (`forRoot({ limiters })`): each one's snapshot. */
  limiters?: ConcurrencyLimitSnapshot[];
}

/** One tile. @publicApi */
export interface DashboardBreaker {
  snapshot: BreakerSnapshot;
  /** For a per-key family: the children that fail most (worst state first, as `aggregate.worstState` ranks them, then the rate an open one opened on, then failure rate). */
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
  /**
   * The worst state among the children (isolated, open, half-open, disabled,
   * closed, worst first), `closed` without children: the tile's colour and
   * badge follow it, as a family whose tenants are all open is not healthy.
   */
  worstState: BreakerState;
  /** Children in `worstState`. */
  worstCount: number;
  /** The earliest `since` of the children in `worstState` (the breakers' clock); absent without children. */
  worstSince: number | undefined;
  /** The windows the open children opened on, summed, while theirs are empty: the rate they opened at. */
  openedOn?: { calls: number; failures: number };
  /** The children's newest transition, with the child's key. */
  lastTransition?: DashboardChildTransition;
}

/** A child's transition, as a family's tile shows it. @publicApi */
export interface DashboardChildTransition extends TransitionEvidence {
  key: string;
}

/** A child of a per-key family, as its family's tile lists it. @publicApi */
export interface DashboardChild {
  key: string;
  state: BreakerState;
  /** Since when it is in `state` (the breakers' clock). */
  since: number;
  failureRate: number;
  calls: number;
  failures: number;
  rejected: number;
  /** While open: the time to its next probe; during a `Retry-After` pause, to its end. */
  retryAfterMs: number | undefined;
  /** Its last transition, with the window it opened on (its own starts empty on opening). */
  lastTransition?: TransitionEvidence;
}

/**
 * What this replica knows of the fleet through its store: whether sharing
 * works from here and how many breakers share; with a store that lists the
 * replicas reporting to it (`RedisBreakerStore.fleetView()`), `view`.
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
  /** The replicas that report and the fleet's state per breaker, when the store lists them (read at most every 3 s). */
  view?: DashboardFleetView;
}

/**
 * The store's fleet view (`FleetView`) as the dashboard last read it: `at` is
 * when the store last answered (the module's clock), absent before its first
 * answer; `ageMs` of each replica is how long before `at` it last reported.
 *
 * @publicApi
 */
export interface DashboardFleetView extends Omit<FleetView, 'at'> {
  at?: number;
  /** Why the last read failed: `replicas` and `breakers` are then the answer before. */
  error?: string;
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
