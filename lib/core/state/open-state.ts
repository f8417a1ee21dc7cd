import { OPEN } from './breaker-state.js';
import {
  PROBE_ADMITTED,
  refusal,
  type AdmissionDecision,
  type BreakerStateBehavior,
  type DecisionInputs,
} from './admission-decision.js';

/**
 * Open: calls are rejected until the open duration ends; the first call after
 * it starts a half-open round and is its first probe.
 *
 * @internal
 */
export const OPEN_STATE: BreakerStateBehavior = Object.freeze({
  code: OPEN,
  decide(inputs: DecisionInputs, now: number): AdmissionDecision {
    return openUntil(inputs.openUntilAt, now);
  },
});

/** @internal The decision of a breaker open until `until`, at `now`. */
export function openUntil(until: number, now: number): AdmissionDecision {
  return now < until ? refusal(OPEN, 'open', until - now) : PROBE_ADMITTED;
}
