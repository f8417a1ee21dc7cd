import {
  CLOSED,
  OPEN,
  type FailureCategory,
  type StateCode,
  type TransitionReason,
} from './breaker-state.js';
import type { Forcing } from './forced-state.js';
import type { OutcomeWindow } from './window/outcome-window.interface.js';

/** A transition as the breaker remembers it: states as numbers, the time on its monotonic reading. @internal */
export interface LastChange {
  readonly from: StateCode;
  readonly to: StateCode;
  readonly reason: TransitionReason;
  readonly at: number;
  readonly window: { calls: number; failures: number; slowCalls: number } | undefined;
}

/**
 * What a breaker keeps of the things that went wrong: the last failure (the
 * `cause` of its rejections, shown in snapshots), the last transition with
 * the evidence that made it, and the application's hooks whose faults were
 * reported already. Created the first time something goes wrong: a breaker
 * that never saw a failure holds one empty field for all of it.
 *
 * @internal
 */
export class BreakerEvidence {
  lastFailure: unknown = undefined;
  lastFailureCategory: FailureCategory | 'overload' = 'other';
  lastChange: LastChange | undefined = undefined;
  /** Listeners and classifiers whose faults were reported: once each is enough to fix them. */
  reportedFaults: Set<string> | undefined = undefined;
  /** While `force()` holds the breaker: what, why, by whom, until when. Kept here, not in a field of its own: most breakers are never forced. */
  forced: Forcing | undefined = undefined;

  noteFailure(failure: unknown, category: FailureCategory | 'overload'): void {
    this.lastFailure = failure;
    this.lastFailureCategory = category;
  }

  /**
   * Remembers a transition; an opening from closed keeps the window that made
   * it (for logs, events and snapshots: the breaker empties the window next).
   * Returns that window's counts, if kept.
   */
  noteTransition(
    from: StateCode,
    to: StateCode,
    reason: TransitionReason,
    at: number,
    window: OutcomeWindow,
  ): LastChange['window'] {
    const counts =
      to === OPEN && from === CLOSED
        ? { calls: window.calls, failures: window.failures, slowCalls: window.slowCalls }
        : undefined;
    this.lastChange = { from, to, reason, at, window: counts };
    return counts;
  }

  /** Whether `source` (a listener, a classifier) has not faulted before; remembers that it has now. */
  firstFaultOf(source: string): boolean {
    const reported = (this.reportedFaults ??= new Set());
    if (reported.has(source)) return false;
    reported.add(source);
    return true;
  }
}
