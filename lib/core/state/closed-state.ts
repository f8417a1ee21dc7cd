import { CLOSED } from './breaker-state.js';
import {
  ADMITTED_CLOSED,
  refusal,
  type AdmissionDecision,
  type BreakerStateBehavior,
  type DecisionInputs,
} from './admission-decision.js';

/**
 * Closed: every call is admitted and counted, except during a pause the
 * dependency asked for (`Retry-After`). Client-side throttling sheds at
 * random when the decision is applied: a pure decision cannot draw.
 *
 * @internal
 */
export const CLOSED_STATE: BreakerStateBehavior = Object.freeze({
  code: CLOSED,
  decide(inputs: DecisionInputs, now: number): AdmissionDecision {
    const pausedUntil = inputs.pausedUntil;
    return now < pausedUntil ? refusal(CLOSED, 'retry-after', pausedUntil - now) : ADMITTED_CLOSED;
  },
});
