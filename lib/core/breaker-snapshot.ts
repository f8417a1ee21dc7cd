import type { BreakerCoordination } from './breaker-coordinator.interface.js';
import type { FamilySnapshot } from './breaker-family.js';
import type { BreakerState, FailureCategory, RejectionReason } from './breaker-state.js';

/**
 * Everything a dashboard needs about one breaker at one instant: the state and
 * its timing, the population the next decision is judged on, the totals since
 * creation (remote failures apart from local rejections), and the thresholds
 * in force.
 *
 * @publicApi
 */
export interface BreakerSnapshot {
  name: string;
  /** For a child of a per-key family: its target's key. */
  key?: string;
  state: BreakerState;
  /** Clock time the current state began. */
  since: number;
  /** While open: when probes will be admitted. */
  openUntil: number | undefined;
  /** While the dependency's `Retry-After` pause lasts: when it ends. */
  pausedUntil: number | undefined;
  /** While open or paused: how long until a call may be admitted. */
  retryAfterMs: number | undefined;
  /** Bumped on every transition; outcomes of older generations are not counted. */
  generation: number;
  window: WindowSnapshot;
  /** While half-open: the probe budget in use. */
  halfOpen: HalfOpenSnapshot | undefined;
  totals: BreakerTotals;
  /** Milliseconds spent in each state since creation, the current one included. */
  timeInStateMs: Record<BreakerState, number>;
  /** For a per-key family: its children. Its own state is the aggregate level. */
  family?: FamilySnapshot;
  /** For a breaker that shares its state with other replicas: whether it does so now. */
  coordination?: BreakerCoordination;
  thresholds: BreakerThresholds;
}

/** @publicApi */
export interface WindowSnapshot {
  type: 'count' | 'time';
  /** Slots of a count window. */
  size?: number;
  /** Span of a time window. */
  durationMs?: number;
  buckets?: number;
  /** Counted calls (successes and failures) in the window. */
  calls: number;
  failures: number;
  slowCalls: number;
  overloads: number;
  shed: number;
  /** failures / calls, 0 while empty. */
  failureRate: number;
  /** slowCalls / calls, 0 while empty. */
  slowCallRate: number;
}

/** @publicApi */
export interface HalfOpenSnapshot {
  probesAdmitted: number;
  probesInFlight: number;
  probesSucceeded: number;
  probesFailed: number;
}

/** @publicApi */
export interface BreakerTotals {
  /** Calls that reached the dependency. */
  admitted: number;
  /** Calls rejected locally, by reason, and their sum. */
  rejected: Record<RejectionReason, number> & { total: number };
  successes: number;
  /** Counted failures by category, and their sum (timeouts included). */
  failures: Record<FailureCategory, number> & { total: number };
  ignored: number;
  overloads: number;
  timeouts: number;
  slowCalls: number;
  probes: { admitted: number; succeeded: number; failed: number; released: number };
  /** Calls a fallback served (reported by the decorator and the operator). */
  fallbacks: number;
}

/** @publicApi */
export interface BreakerThresholds {
  failureRateThreshold: number | undefined;
  minimumThroughput: number;
  consecutiveFailures: number | undefined;
  slowCallDurationMs: number | undefined;
  slowCallRateThreshold: number | undefined;
  timeoutMs: number | undefined;
  openDurationMs: number;
  /** The open duration the next reopen would use before jitter (grows with backoff). */
  nextOpenDurationMs: number;
  maxProbes: number;
  maxConcurrentProbes: number;
  successesToClose: number;
}
