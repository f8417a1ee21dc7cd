import type { StateCode } from './breaker-state.js';
import type { BreakerStateBehavior } from './admission-decision.js';
import { CLOSED_STATE } from './closed-state.js';
import { DISABLED_STATE, ISOLATED_STATE, METRICS_ONLY_STATE } from './forced-modes.js';
import { HALF_OPEN_STATE } from './half-open-state.js';
import { OPEN_STATE } from './open-state.js';

/** Indexed by state code (see `BREAKER_STATES`). */
const BEHAVIORS: readonly BreakerStateBehavior[] = Object.freeze([
  CLOSED_STATE,
  OPEN_STATE,
  HALF_OPEN_STATE,
  ISOLATED_STATE,
  DISABLED_STATE,
  METRICS_ONLY_STATE,
]);

/** @internal The behaviour of the state `code`: the one decision tree of admission and `peek()`. */
export function behaviorOf(code: StateCode): BreakerStateBehavior {
  return BEHAVIORS[code]!;
}
