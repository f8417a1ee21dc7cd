import type { LimitAlgorithmName } from '../limit/limit-options.js';
import type { InjectedFaultSnapshot } from '../faults/fault-injection.js';
import type { ForcedStateSnapshot } from '../state/forced-state.js';
import type { BreakerCoordination } from '../ports/breaker-coordinator.interface.js';
import type { FamilySnapshot } from '../family/breaker-family.js';
import type {
  BreakerState,
  FailureCategory,
  RejectionReason,
  TransitionReason,
} from '../state/breaker-state.js';
import { httpStatusOf } from '../classify/classify.js';

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
  /**
   * Why the breaker is in its state: the last transition, dated when it was
   * due, and for an opening from closed the window that made it (the window
   * itself starts empty again on every transition). Absent before the first.
   */
  lastTransition?: TransitionEvidence;
  /** The last failure the breaker counted, as far as it can be read. Absent before the first. */
  lastFailure?: FailureSummary;
  /** While `force()` holds the breaker: what, why, by whom and until when. */
  forced?: ForcedStateSnapshot;
  /** For a per-key family: its children. Its own state is the aggregate level. */
  family?: FamilySnapshot;
  /** For a breaker that shares its state with other replicas: whether it does so now. */
  coordination?: BreakerCoordination;
  /** With the `bulkhead` option: the cap, and how many calls run and wait now. */
  bulkhead?: BulkheadSnapshot;
  /** While the slow start after closing lasts (`rampUp`): the share admitted now, and when it ends. */
  rampUp?: RampUpSnapshot;
  /** While an active health check (`healthCheck`) runs for the open breaker: when the next is due. */
  healthCheck?: HealthCheckSnapshot;
  thresholds: BreakerThresholds;
  /** While a fault is injected (`injectFault()`): what it is, and how many calls got it. */
  injectedFault?: InjectedFaultSnapshot;
}

/** @publicApi */
export interface HealthCheckSnapshot {
  /** Clock time the next health check is due. */
  nextAt: number;
  /** Whether one is in flight now. */
  inFlight: boolean;
}

/** @publicApi */
export interface RampUpSnapshot {
  /** The share of calls admitted now, in (0, 1]. */
  ratio: number;
  /** Clock time the ramp ends. */
  until: number;
}

/** @publicApi */
export interface BulkheadSnapshot {
  /** How many calls may run at once now: the fixed cap, or the limit the adaptive cap's algorithm has reached. */
  maxConcurrent: number;
  /** With an adaptive cap (`bulkhead.algorithm`): its algorithm. */
  algorithm?: Exclude<LimitAlgorithmName, 'fixed'>;
  maxQueue: number;
  /** Calls holding a slot now. */
  active: number;
  /** Calls waiting for one. */
  queued: number;
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
  /**
   * Half-open probes. They add up: `admitted` = `succeeded` + `failed` + `released` +
   * `abandoned` (in flight when their round ended) + the current round's `probesInFlight`.
   */
  probes: {
    admitted: number;
    succeeded: number;
    failed: number;
    released: number;
    abandoned: number;
  };
  /** Calls a fallback served (reported by the decorator and the operator). */
  fallbacks: number;
  /** Retries made through `withRetry()` or the decorator's `retry`, and those the retry budget refused. */
  retries: { attempted: number; denied: number };
  /** Active health checks (`healthCheck` option) that settled. */
  healthChecks: { succeeded: number; failed: number };
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

/** @publicApi */
export interface TransitionEvidence {
  from: BreakerState;
  to: BreakerState;
  reason: TransitionReason;
  /** When it happened, or was due (a lazy transition is dated when time made it due). */
  at: number;
  /** When a rate rule opened a closed breaker (`failure-rate`, `slow-call-rate`): the window it opened on. */
  window?: { calls: number; failures: number; slowCalls: number; failureRate: number };
  /** When the `consecutive-failures` rule opened a closed breaker: the streak. */
  consecutiveFailures?: number;
  /** When a family opened for its children (`open-ratio`): how many were failing, of those it knew. */
  children?: { failing: number; known: number };
}

/** @publicApi */
export interface FailureSummary {
  /** `timeout`, `connection`, `server`, `other`, or `overload` for a 429 or a 503 with `Retry-After`. */
  category: FailureCategory | 'overload';
  /** The error's class name (`Error`, `AxiosError`, `CallTimeoutError`...), when it is an Error. */
  name?: string;
  /** The HTTP status it carried, if any. */
  status?: number;
  /** Its message, at most 200 characters. */
  message?: string;
}

const MESSAGE_LIMIT = 200;

/**
 * A failure, described without trusting it: a getter or a Proxy trap that
 * throws leaves that part out. Run only when a snapshot is taken.
 *
 * @internal
 */
export function describeFailure(
  failure: unknown,
  category: FailureCategory | 'overload',
): FailureSummary {
  const summary: FailureSummary = { category };
  const status = httpStatusOf(failure);
  if (status !== undefined) summary.status = status;
  try {
    if (failure instanceof Error) {
      const name: unknown = failure.name;
      const message: unknown = failure.message;
      if (typeof name === 'string') summary.name = name;
      if (typeof message === 'string')
        summary.message =
          message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT - 1)}…` : message;
    } else if (typeof failure === 'string') {
      summary.message = failure.slice(0, MESSAGE_LIMIT);
    }
  } catch {
    // What cannot be read is left out.
  }
  return summary;
}
