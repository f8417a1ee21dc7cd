import type { CallOutcome } from '../state/breaker-state.js';
import { failureCategoryOf } from '../classify/classify.js';
import type { LimitAlgorithm } from '../limit/limit-algorithm.js';
import { limitAlgorithmOf } from '../limit/limit-algorithm-of.js';
import type { ResolvedBreakerOptions } from '../options/resolved-breaker-options.interface.js';

type Limits = NonNullable<ResolvedBreakerOptions['bulkhead']>;

/**
 * The algorithm of an adaptive bulkhead (`bulkhead.algorithm`), or `undefined`
 * for a fixed cap. `current`, the algorithm in force under the `previous`
 * limits, is kept when the algorithm and its bounds did not change (a new
 * `maxQueue` forgets nothing); otherwise a new algorithm starts from the
 * limit `current` reached, within the new bounds, and a first one from
 * `initialLimit`.
 *
 * @internal
 */
export function adaptiveCapOf(
  limits: Limits,
  previous: Limits | undefined,
  current: LimitAlgorithm | undefined,
): LimitAlgorithm | undefined {
  if (limits.algorithm === undefined) return undefined;
  if (
    current !== undefined &&
    previous?.algorithm === limits.algorithm &&
    previous.initialLimit === limits.initialLimit &&
    previous.minLimit === limits.minLimit &&
    previous.maxLimit === limits.maxLimit
  )
    return current;
  const { minLimit, maxLimit } = limits;
  const initialLimit =
    current === undefined
      ? limits.initialLimit
      : Math.min(maxLimit, Math.max(minLimit, current.limit));
  return limitAlgorithmOf({
    algorithm: limits.algorithm,
    initialLimit,
    minLimit,
    maxLimit,
    maxQueue: limits.maxQueue,
    queueTimeoutMs: limits.queueTimeoutMs,
  });
}

/**
 * What a call that held a slot tells an adaptive cap as it settles: `false`
 * for a success (its time is a latency measurement), `true` for an overload
 * sign (the breaker's deadline, a failure that was a timeout, an overload
 * such as a 429 or a 503), `undefined` for nothing (any other failure, whose
 * time says nothing of the load; an ignored or withdrawn call).
 *
 * @internal
 */
export function sampleOf(
  outcome: CallOutcome | 'timeout' | undefined,
  subject: unknown,
): boolean | undefined {
  if (outcome === 'success') return false;
  if (outcome === 'timeout' || outcome === 'overload') return true;
  if (outcome === 'failure' && failureCategoryOf(subject) === 'timeout') return true;
  return undefined;
}
