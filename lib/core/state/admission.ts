import type { BreakerCounters } from '../snapshot/breaker-counters.js';
import type { BreakerEventHub } from '../events/breaker-events.js';
import { CLOSED, HALF_OPEN, type RejectionReason, type StateCode } from './breaker-state.js';
import type { CallRejectedError } from '../errors/breaker.errors.js';
import { UNCOUNTED } from '../calls/call-tokens.js';
import type { HalfOpenRound } from '../recovery/half-open-round.js';
import type { OverloadPressure } from '../overload/overload-pressure.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import { LET_THROUGH, PROBE, REJECT } from './admission-decision.js';
import type { AdmissionDecision } from './admission-decision.js';

// A throttled call may be admitted at any moment; this is a polite hint, not a schedule.
const THROTTLED_RETRY_AFTER_MS = 1_000;

/** What admission reads and moves on a breaker, past its closed fast path. @internal */
export interface AdmittingBreaker {
  readonly config: ResolvedBreakerOptions;
  readonly counters: BreakerCounters;
  readonly hub: BreakerEventHub | undefined;
  readonly current: StateCode;
  readonly generation: number;
  readonly openUntilAt: number;
  readonly round: HalfOpenRound | undefined;
  overload: OverloadPressure | undefined;
  monotonic(): number;
  decide(now: number): AdmissionDecision;
  reject(reason: RejectionReason, retryAfterMs: number | undefined): CallRejectedError;
  draw(): number;
  reportHookError(source: string, error: Error): void;
}

/**
 * Applies what the state decided for a call at `now` (after the transitions
 * due were made): counts the call, takes its probe permit, sheds it under
 * overload, or rejects it. Returns the call's token (its admission number; a
 * negative probe id for a probe) or the rejection. (Injected faults are a
 * stage of their own: `faults/fault-stage.ts`.)
 *
 * @internal
 */
export function applyDecision(b: AdmittingBreaker, now: number): number | CallRejectedError {
  const decision = b.decide(now);
  switch (decision.kind) {
    case REJECT:
      return b.reject(decision.reason, decision.retryAfterMs);
    case LET_THROUGH:
      return UNCOUNTED;
    case PROBE:
      return admitProbe(b, now);
    default:
      if (b.current === CLOSED && b.overload !== undefined) {
        const shed = shedUnderOverload(b, now);
        if (shed !== undefined) return shed;
      }
      return b.counters.admitted++;
  }
}

/**
 * A family's own gate for a child's call at `now` (after the transitions due
 * were made): 0 to pass, a probe token, or the rejection.
 *
 * @internal
 */
export function applyFamilyDecision(b: AdmittingBreaker, now: number): number | CallRejectedError {
  const decision = b.decide(now);
  if (decision.kind === REJECT) return b.reject(decision.reason, decision.retryAfterMs);
  return decision.kind === PROBE ? admitProbe(b, now) : 0;
}

/** @internal Until the open duration ends; past it (the fleet's probe is someone else's), until that probe must be decided. */
export function openRetryAfter(b: AdmittingBreaker, now: number): number {
  return now < b.openUntilAt ? b.openUntilAt - now : b.config.probeMaxWaitMs;
}

/** The dependency reports overload and its pause is over: client-side throttling sheds a share of calls. */
function shedUnderOverload(b: AdmittingBreaker, now: number): CallRejectedError | undefined {
  const pressure = b.overload!;
  // The pause is over (the decision said so): forget it.
  pressure.pauseLeft(now);
  if (pressure.shed(b.config, now, b)) return b.reject('throttled', THROTTLED_RETRY_AFTER_MS);
  // The pause is over and the overloads have left the window: calls take the plain path again.
  if (pressure.spent) b.overload = undefined;
  return undefined;
}

/**
 * A probe permit, if the round has room. Still open when the decision was
 * made (the open duration is over, but the fleet's probe is another
 * replica's): rejected until that probe must be decided.
 */
function admitProbe(b: AdmittingBreaker, now: number): number | CallRejectedError {
  const round = b.round;
  if (b.current !== HALF_OPEN || round === undefined)
    return b.reject('open', openRetryAfter(b, now));
  if (round.full) return b.reject('half-open-busy', round.retryAfter(now));
  const id = round.admit(now);
  b.counters.admitted++;
  b.counters.rare.probesAdmitted++;
  b.hub?.emit('probe', { result: 'admitted' });
  return -id;
}
