import { DISABLED, ISOLATED, METRICS_ONLY, type StateCode } from './breaker-state.js';
import {
  ADMITTED_METRICS_ONLY,
  LET_THROUGH_DISABLED,
  refusal,
  type AdmissionDecision,
  type BreakerStateBehavior,
  type DecisionInputs,
} from './admission-decision.js';
import { CLOSED_STATE } from './closed-state.js';

/**
 * A mode held by `force()`: `decide` answers as the mode does until the
 * force's end, and as closed from then on (a force that has ended is released
 * back to closed).
 */
function forcedMode(
  code: StateCode,
  held: (inputs: DecisionInputs, now: number) => AdmissionDecision,
): BreakerStateBehavior {
  return Object.freeze({
    code,
    decide(inputs: DecisionInputs, now: number): AdmissionDecision {
      const until = inputs.forcing?.until;
      return until !== undefined && now >= until
        ? CLOSED_STATE.decide(inputs, now)
        : held(inputs, now);
    },
  });
}

/** @internal Forced open: every call is rejected, until the force ends if it does. */
export const ISOLATED_STATE: BreakerStateBehavior = forcedMode(ISOLATED, (inputs, now) => {
  const until = inputs.forcing?.until;
  return refusal(ISOLATED, 'isolated', until === undefined ? undefined : until - now);
});

/** @internal Forced metrics-only: every call is admitted and counted; nothing trips. */
export const METRICS_ONLY_STATE: BreakerStateBehavior = forcedMode(
  METRICS_ONLY,
  () => ADMITTED_METRICS_ONLY,
);

/** @internal Forced disabled: every call is let through, and nothing is counted. */
export const DISABLED_STATE: BreakerStateBehavior = forcedMode(
  DISABLED,
  () => LET_THROUGH_DISABLED,
);
