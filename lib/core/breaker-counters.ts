import type { BreakerTotals } from './breaker-snapshot.js';
import type { BreakerState, FailureCategory, RejectionReason } from './breaker-state.js';

/**
 * Every counter of one breaker in one flat object of small integers: a
 * breaker per target multiplies this, so it must stay a single allocation.
 * Snapshots build the nested, readable shape on demand.
 *
 * @internal
 */
export class BreakerCounters {
  admitted = 0;
  successes = 0;
  ignored = 0;
  overloads = 0;
  timeouts = 0;
  slowCalls = 0;
  fallbacks = 0;
  rejectedOpen = 0;
  rejectedHalfOpenBusy = 0;
  rejectedIsolated = 0;
  rejectedRetryAfter = 0;
  rejectedThrottled = 0;
  failedTimeout = 0;
  failedConnection = 0;
  failedServer = 0;
  failedOther = 0;
  probesAdmitted = 0;
  probesSucceeded = 0;
  probesFailed = 0;
  probesReleased = 0;
  msClosed = 0;
  msOpen = 0;
  msHalfOpen = 0;
  msIsolated = 0;
  msDisabled = 0;

  reject(reason: RejectionReason): void {
    if (reason === 'open') this.rejectedOpen++;
    else if (reason === 'half-open-busy') this.rejectedHalfOpenBusy++;
    else if (reason === 'isolated') this.rejectedIsolated++;
    else if (reason === 'retry-after') this.rejectedRetryAfter++;
    else this.rejectedThrottled++;
  }

  fail(category: FailureCategory): void {
    if (category === 'timeout') this.failedTimeout++;
    else if (category === 'connection') this.failedConnection++;
    else if (category === 'server') this.failedServer++;
    else this.failedOther++;
  }

  /** Adds time spent in a state (indexed as the breaker numbers its states). */
  spend(state: number, ms: number): void {
    if (state === 0) this.msClosed += ms;
    else if (state === 1) this.msOpen += ms;
    else if (state === 2) this.msHalfOpen += ms;
    else if (state === 3) this.msIsolated += ms;
    else this.msDisabled += ms;
  }

  timeInState(current: number, currentMs: number): Record<BreakerState, number> {
    return {
      closed: this.msClosed + (current === 0 ? currentMs : 0),
      open: this.msOpen + (current === 1 ? currentMs : 0),
      'half-open': this.msHalfOpen + (current === 2 ? currentMs : 0),
      isolated: this.msIsolated + (current === 3 ? currentMs : 0),
      disabled: this.msDisabled + (current === 4 ? currentMs : 0),
    };
  }

  totals(): BreakerTotals {
    const rejected = { open: this.rejectedOpen, 'half-open-busy': this.rejectedHalfOpenBusy, isolated: this.rejectedIsolated, 'retry-after': this.rejectedRetryAfter, throttled: this.rejectedThrottled };
    const failures = { timeout: this.failedTimeout, connection: this.failedConnection, server: this.failedServer, other: this.failedOther };
    return {
      admitted: this.admitted,
      rejected: { ...rejected, total: rejected.open + rejected['half-open-busy'] + rejected.isolated + rejected['retry-after'] + rejected.throttled },
      successes: this.successes,
      failures: { ...failures, total: failures.timeout + failures.connection + failures.server + failures.other },
      ignored: this.ignored,
      overloads: this.overloads,
      timeouts: this.timeouts,
      slowCalls: this.slowCalls,
      probes: { admitted: this.probesAdmitted, succeeded: this.probesSucceeded, failed: this.probesFailed, released: this.probesReleased },
      fallbacks: this.fallbacks,
    };
  }
}
