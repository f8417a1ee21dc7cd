import {
  CLOSED,
  DISABLED,
  HALF_OPEN,
  METRICS_ONLY,
  type RejectionReason,
  type StateCode,
} from './breaker-state.js';
import type { Forcing } from './forced-state.js';
import type { HalfOpenRound } from '../recovery/half-open-round.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';

/** @internal Admitted and counted: a closed or metrics-only breaker's call. */
export const ADMIT = 0;
/** @internal Let through and counted nowhere: a disabled breaker's call. */
export const LET_THROUGH = 1;
/** @internal Admitted as a half-open probe (the round may still have to start: the open duration is over). */
export const PROBE = 2;
/** @internal Rejected. */
export const REJECT = 3;

/** @internal A decision that admits; `state` is the state the call finds. */
export interface Permit {
  readonly kind: typeof ADMIT | typeof LET_THROUGH | typeof PROBE;
  readonly state: StateCode;
}

/** @internal A decision that rejects, as `CallRejectedError` would say it. */
export interface Refusal {
  readonly kind: typeof REJECT;
  readonly state: StateCode;
  readonly reason: RejectionReason;
  readonly retryAfterMs: number | undefined;
}

/**
 * What a state decides for a call arriving at a given time. `admit()` applies
 * it (counting, taking a probe permit, rejecting); `peek()` only reports it.
 *
 * @internal
 */
export type AdmissionDecision = Permit | Refusal;

// The admitting decisions are shared and frozen: deciding allocates nothing unless it rejects.
/** @internal */
export const ADMITTED_CLOSED: Permit = Object.freeze({ kind: ADMIT, state: CLOSED });
/** @internal */
export const ADMITTED_METRICS_ONLY: Permit = Object.freeze({ kind: ADMIT, state: METRICS_ONLY });
/** @internal */
export const LET_THROUGH_DISABLED: Permit = Object.freeze({ kind: LET_THROUGH, state: DISABLED });
/** @internal */
export const PROBE_ADMITTED: Permit = Object.freeze({ kind: PROBE, state: HALF_OPEN });

/** @internal */
export function refusal(
  state: StateCode,
  reason: RejectionReason,
  retryAfterMs: number | undefined,
): Refusal {
  return { kind: REJECT, state, reason, retryAfterMs };
}

/**
 * What a state reads to decide: the breaker's data as last decided. Reading
 * only, so that deciding changes nothing and `peek()` can ask freely.
 *
 * @internal
 */
export interface DecisionInputs {
  readonly config: ResolvedBreakerOptions;
  /** When the open period ends (monotonic). */
  readonly openUntilAt: number;
  /** How many times it reopened in a row: the next open period's backoff. */
  readonly reopens: number;
  /** Only while half-open: the probe budget in use. */
  readonly round: HalfOpenRound | undefined;
  /** Only while held by `force()`. */
  readonly forcing: Forcing | undefined;
  /** When the dependency's `Retry-After` pause ends (monotonic); 0 for none. */
  readonly pausedUntil: number;
}

/**
 * One state of the breaker, as far as admission goes: a pure decision for a
 * call arriving at `now`. A transition that time has made due by `now` (an
 * open period over, probes expired, a force ended) is reflected in the
 * answer, not made: the breaker makes it before it applies a decision.
 *
 * @internal
 */
export interface BreakerStateBehavior {
  readonly code: StateCode;
  decide(inputs: DecisionInputs, now: number): AdmissionDecision;
}
