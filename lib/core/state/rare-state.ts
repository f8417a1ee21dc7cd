import {
  CLOSED,
  OPEN,
  type FailureCategory,
  type StateCode,
  type TransitionReason,
} from './breaker-state.js';
import type { FaultPlan } from '../faults/fault-injection.js';
import type { Forcing } from './forced-state.js';
import type { OutcomeWindow } from '../window/outcome-window.interface.js';

/** A transition as the breaker remembers it: states as numbers, the time on its monotonic reading. @internal */
export interface LastChange {
  readonly from: StateCode;
  readonly to: StateCode;
  readonly reason: TransitionReason;
  readonly at: number;
  readonly window: { calls: number; failures: number; slowCalls: number } | undefined;
  /** With reason `consecutive-failures`: the streak that tripped it. */
  readonly consecutiveFailures: number | undefined;
  /** With reason `open-ratio`: the family's children failing, of those it knows. */
  readonly children: ChildrenEvidence | undefined;
}

/** A family's children when it opened for them. @internal */
export interface ChildrenEvidence {
  readonly failing: number;
  readonly known: number;
}

/** The evidence of the rule that made a transition, as events carry it. @internal */
export interface TransitionProof {
  window?: { calls: number; failures: number; slowCalls: number };
  consecutiveFailures?: number;
  children?: ChildrenEvidence;
}

const NO_PROOF: TransitionProof = Object.freeze({});

/**
 * What only some breakers ever need, in one field created the first time one
 * of them is: the last failure (the `cause` of its rejections, shown in
 * snapshots), the last transition with the evidence that made it, the
 * application's hooks whose errors were reported already, a force held by
 * hand, and an injected fault. A breaker that never saw any of it holds one
 * empty field for all of it. (The dependency's overload pressure has a field
 * of its own, `overload`: the one a closed breaker's admission checks. The
 * half-open round has `round`; a bulkhead, a slow start and an active health check
 * live beside the breaker, see `calls/guard-slot.ts`.)
 *
 * @internal
 */
export class RareState {
  lastFailure: unknown = undefined;
  lastFailureCategory: FailureCategory | 'overload' = 'other';
  lastChange: LastChange | undefined = undefined;
  /** Listeners and classifiers whose errors were reported: once each is enough to fix them. */
  reportedHookErrors: Set<string> | undefined = undefined;
  /** While `force()` holds the breaker: what, why, by whom, until when. */
  forced: Forcing | undefined = undefined;
  /** While a fault is injected (`injectFault()`): the fault, read by the fault stage of its calls. It outlives `reset()`. */
  faults: FaultPlan | undefined = undefined;

  noteFailure(failure: unknown, category: FailureCategory | 'overload'): void {
    this.lastFailure = failure;
    this.lastFailureCategory = category;
  }

  /**
   * Remembers a transition with the evidence of the rule that made it (for
   * logs, events and snapshots: the breaker empties the window next): the
   * window for a rate rule, the streak for `consecutive-failures`, the
   * children for `open-ratio`; nothing for a transition no count decided
   * (another replica's, an operator's). Returns that evidence.
   */
  noteTransition(
    from: StateCode,
    to: StateCode,
    reason: TransitionReason,
    at: number,
    window: OutcomeWindow,
    streak: number,
    children: ChildrenEvidence | undefined,
  ): TransitionProof {
    let proof = NO_PROOF;
    if (to === OPEN && from === CLOSED) {
      if (reason === 'failure-rate' || reason === 'slow-call-rate')
        proof = {
          window: { calls: window.calls, failures: window.failures, slowCalls: window.slowCalls },
        };
      else if (reason === 'consecutive-failures') proof = { consecutiveFailures: streak };
      else if (reason === 'open-ratio' && children !== undefined) proof = { children };
    }
    this.lastChange = {
      from,
      to,
      reason,
      at,
      window: proof.window,
      consecutiveFailures: proof.consecutiveFailures,
      children: proof.children,
    };
    return proof;
  }

  /** Whether this is the first hook error of `source` (a listener, a classifier); remembers it, so the next is not. */
  firstHookErrorOf(source: string): boolean {
    const reported = (this.reportedHookErrors ??= new Set());
    if (reported.has(source)) return false;
    reported.add(source);
    return true;
  }
}
