import type { BreakerTotals } from './breaker-snapshot.js';
import {
  CLOSED,
  DISABLED,
  HALF_OPEN,
  ISOLATED,
  METRICS_ONLY,
  OPEN,
  type BreakerState,
  type FailureCategory,
  type RejectionReason,
  type StateCode,
} from '../state/breaker-state.js';

/**
 * Counters that only move when something goes wrong (failures, ignored
 * calls, rejections, timeouts, overloads, probes, transitions): a healthy
 * breaker never allocates them.
 */
class RareCounters {
  ignored = 0;
  failedTimeout = 0;
  failedConnection = 0;
  failedServer = 0;
  failedOther = 0;
  overloads = 0;
  timeouts = 0;
  slowCalls = 0;
  fallbacks = 0;
  rejectedOpen = 0;
  rejectedHalfOpenBusy = 0;
  rejectedIsolated = 0;
  rejectedRetryAfter = 0;
  rejectedThrottled = 0;
  rejectedBulkheadFull = 0;
  rejectedRampUp = 0;
  retries = 0;
  retriesDenied = 0;
  healthChecksSucceeded = 0;
  healthChecksFailed = 0;
  probesAdmitted = 0;
  probesSucceeded = 0;
  probesFailed = 0;
  probesReleased = 0;
  probesAbandoned = 0;
  msClosed = 0;
  msOpen = 0;
  msHalfOpen = 0;
  msIsolated = 0;
  msDisabled = 0;
  msMetricsOnly = 0;
  /** `reconfigure()` calls that put options in force. */
  reconfigurations = 0;
  /** Admissions taken back (`withdrawAdmission()`): not calls after all. */
  withdrawn = 0;
}

const NONE = Object.freeze(new RareCounters());

/**
 * Every counter of one breaker, in as few allocations as a breaker per target
 * can afford: the counters every call moves sit here, the others in an object
 * created the first time one of them moves. Snapshots build the nested,
 * readable shape on demand.
 *
 * @internal
 */
export class BreakerCounters {
  /**
   * Every admission ever made, withdrawn ones included: it only grows, so each
   * admitted call takes it as its number (its token). The total shown is this
   * less the withdrawn ones.
   */
  admitted = 0;
  successes = 0;
  private more: RareCounters | undefined = undefined;

  /** How many times `reconfigure()` put options in force. */
  get reconfigurations(): number {
    return this.more?.reconfigurations ?? 0;
  }

  /** The rare counters, for writing. */
  get rare(): RareCounters {
    return (this.more ??= new RareCounters());
  }

  reject(reason: RejectionReason): void {
    const rare = this.rare;
    if (reason === 'open') rare.rejectedOpen++;
    else if (reason === 'half-open-busy') rare.rejectedHalfOpenBusy++;
    else if (reason === 'isolated') rare.rejectedIsolated++;
    else if (reason === 'retry-after') rare.rejectedRetryAfter++;
    else if (reason === 'throttled') rare.rejectedThrottled++;
    else if (reason === 'bulkhead-full') rare.rejectedBulkheadFull++;
    else rare.rejectedRampUp++;
  }

  fail(category: FailureCategory): void {
    const rare = this.rare;
    if (category === 'timeout') rare.failedTimeout++;
    else if (category === 'connection') rare.failedConnection++;
    else if (category === 'server') rare.failedServer++;
    else rare.failedOther++;
  }

  /** Adds time spent in a state. */
  spend(state: StateCode, ms: number): void {
    const rare = this.rare;
    if (state === CLOSED) rare.msClosed += ms;
    else if (state === OPEN) rare.msOpen += ms;
    else if (state === HALF_OPEN) rare.msHalfOpen += ms;
    else if (state === ISOLATED) rare.msIsolated += ms;
    else if (state === DISABLED) rare.msDisabled += ms;
    else rare.msMetricsOnly += ms;
  }

  timeInState(current: StateCode, currentMs: number): Record<BreakerState, number> {
    const rare = this.more ?? NONE;
    return {
      closed: rare.msClosed + (current === CLOSED ? currentMs : 0),
      open: rare.msOpen + (current === OPEN ? currentMs : 0),
      'half-open': rare.msHalfOpen + (current === HALF_OPEN ? currentMs : 0),
      isolated: rare.msIsolated + (current === ISOLATED ? currentMs : 0),
      disabled: rare.msDisabled + (current === DISABLED ? currentMs : 0),
      'metrics-only': rare.msMetricsOnly + (current === METRICS_ONLY ? currentMs : 0),
    };
  }

  totals(): BreakerTotals {
    const rare = this.more ?? NONE;
    const rejected = {
      open: rare.rejectedOpen,
      'half-open-busy': rare.rejectedHalfOpenBusy,
      isolated: rare.rejectedIsolated,
      'retry-after': rare.rejectedRetryAfter,
      throttled: rare.rejectedThrottled,
      'bulkhead-full': rare.rejectedBulkheadFull,
      'ramp-up': rare.rejectedRampUp,
    };
    const failures = {
      timeout: rare.failedTimeout,
      connection: rare.failedConnection,
      server: rare.failedServer,
      other: rare.failedOther,
    };
    return {
      admitted: this.admitted - rare.withdrawn,
      rejected: {
        ...rejected,
        total:
          rejected.open +
          rejected['half-open-busy'] +
          rejected.isolated +
          rejected['retry-after'] +
          rejected.throttled +
          rejected['bulkhead-full'] +
          rejected['ramp-up'],
      },
      successes: this.successes,
      failures: {
        ...failures,
        total: failures.timeout + failures.connection + failures.server + failures.other,
      },
      ignored: rare.ignored,
      overloads: rare.overloads,
      timeouts: rare.timeouts,
      slowCalls: rare.slowCalls,
      probes: {
        admitted: rare.probesAdmitted,
        succeeded: rare.probesSucceeded,
        failed: rare.probesFailed,
        released: rare.probesReleased,
        abandoned: rare.probesAbandoned,
      },
      fallbacks: rare.fallbacks,
      retries: { attempted: rare.retries, denied: rare.retriesDenied },
      healthChecks: {
        succeeded: rare.healthChecksSucceeded,
        failed: rare.healthChecksFailed,
      },
    };
  }
}
