// The fleet view: one definition for nestjs-circuit-breaker/redis (which reads it)
// and /dashboard (which shows it). Types only, importing no optional peer, so
// neither entry point's declarations need ioredis.
import type { BreakerState } from '../core/index.js';

/** One replica as the store's registry of replicas lists it. @publicApi */
export interface FleetReplica {
  /** Its `instanceId`. */
  instanceId: string;
  /** When it last reported (Redis' clock, milliseconds since the epoch). */
  lastSeenAt: number;
  /** How long ago that was, on Redis' clock (so the replicas' clock skew does not matter). */
  ageMs: number;
  /** Whether its store shared its state when it reported (`RedisBreakerStore.shared`): `false` too while, on a Redis Cluster, the slot of one of its breakers is down. */
  shared: boolean;
  /** Its shared breakers that were not closed, with their local state; closed ones are left out. */
  notClosed: Record<string, BreakerState>;
  /** How many breakers it shares through the store. */
  breakers: number;
  /** `true` when it had more breakers not closed than a report lists (`notClosed` is then partial). */
  truncated?: boolean;
}

/** The fleet's view of one breaker that some replica reports not closed. @publicApi */
export interface FleetBreaker {
  /**
   * The shared state as Redis holds it: `open` until `openUntil`, `closed`, or
   * `none` (no shared state: it never opened fleet-wide, or it expired);
   * `unavailable` when its Cluster slot did not answer (a master down).
   */
  shared:
    | { state: 'open'; openUntil: number }
    | { state: 'closed' }
    | { state: 'none' }
    | { state: 'unavailable' };
  /** How many listed replicas see it open (`open` or `isolated`), half-open, otherwise not closed. */
  replicasOpen: number;
  replicasHalfOpen: number;
  replicasNotClosed: number;
}

/**
 * `RedisBreakerStore.fleetView()`: the replicas that report (each reconcile
 * interval) and the breakers any of them sees not closed. A breaker missing
 * from `breakers` is closed on every listed replica. The dashboard's
 * `DashboardFleetView` is this view as it last read it.
 *
 * @publicApi
 */
export interface FleetView {
  /** When it was read (Redis' clock). */
  at: number;
  /** Every replica that reported within its last few reconcile intervals, by `instanceId`. */
  replicas: FleetReplica[];
  breakers: Record<string, FleetBreaker>;
}
