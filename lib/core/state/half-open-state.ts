import { HALF_OPEN } from './breaker-state.js';
import { baseOpenDuration } from './open-duration.js';
import {
  PROBE_ADMITTED,
  refusal,
  type AdmissionDecision,
  type BreakerStateBehavior,
  type DecisionInputs,
} from './admission-decision.js';
import { openUntil } from './open-state.js';

/**
 * Half-open: a call is a probe while the round's budget has room. Probes that
 * have waited past `halfOpen.maxWaitMs` by `now` count as failed: when that
 * makes closing impossible, the breaker has reopened, and the open period is
 * estimated without jitter (drawn only when the reopening is made).
 *
 * @internal
 */
export const HALF_OPEN_STATE: BreakerStateBehavior = Object.freeze({
  code: HALF_OPEN,
  decide(inputs: DecisionInputs, now: number): AdmissionDecision {
    const round = inputs.round!.peek(now);
    if ('reopensAt' in round)
      return openUntil(round.reopensAt + baseOpenDuration(inputs.config, inputs.reopens + 1), now);
    return round.full ? refusal(HALF_OPEN, 'half-open-busy', round.retryAfter) : PROBE_ADMITTED;
  },
});
