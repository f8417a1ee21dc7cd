import type { CallRejectedError } from '../errors/breaker.errors.js';
import type { RejectionReason } from '../state/breaker-state.js';
import type { FaultPlan } from '../faults/fault-injection.js';
import type { BreakerParts } from './breaker-parts.js';
import type { FaultedCall } from './faulted-call.js';
import type { HeldCall } from './held-call.js';
import type { CallOwner, TrackedCall } from './tracked-call.js';
import type { UncountedCall } from './uncounted-call.js';

/** What the stages of a call's pipeline read of its breaker. @internal */
export interface PipelineBreaker extends CallOwner {
  readonly timed: boolean;
  readonly parent: PipelineBreaker | undefined;
  /** What only some breakers need: here, the fault injected into its calls and the bulkhead and slow start. */
  readonly rare:
    | { readonly faults: FaultPlan | undefined; readonly parts: BreakerParts | undefined }
    | undefined;
  /** Forced `disabled`: every call goes through uncounted, past the bulkhead too. */
  readonly lettingAllThrough: boolean;
  /** A family's overflow child: its family, which counts each key's calls on it. */
  readonly overflowCalls: OverflowCalls | undefined;
  monotonic(): number;
  /** The state's admission: a token (the admission number; a negative probe id for a probe), or the rejection. */
  admitOwn(): number | CallRejectedError;
  /** Whether this is a child whose family is not closed: its calls pass the family's gate first. */
  underFamilyGate(): boolean;
  /** A family's own gate for a child's call: 0 to pass, a probe token, or the rejection. */
  admitAsFamily(): number | CallRejectedError;
  /** Rejects a call (a stage's `bulkhead-full`, `ramp-up`): counted and announced. */
  reject(reason: RejectionReason, retryAfterMs: number | undefined): CallRejectedError;
  /** The rejection its state (or its family's) gives a call now, counted and announced; none when it may be admitted. */
  stateRefusal(): CallRejectedError | undefined;
  /** Hears of a faulty random draw of an injected fault (once per injection). */
  reportHookError(source: string, error: Error): void;
}

/** What the overflow child's stage tells its family of each call (see `FamilyTransitions`). @internal */
export interface OverflowCalls {
  claimOverflowCall(): string | undefined;
  overflowCallEnded(key: string): void;
  keptSlots(key: string): { tryEnter(): boolean; readonly leave: () => void } | undefined;
}

/** A call object: what a call that needs more than the plain path runs in. @internal */
export type AdmittedCall<T> = TrackedCall<T> | FaultedCall<T> | UncountedCall<T> | HeldCall<T>;

/**
 * What a call's admission gives: a token for the plain path (no call object),
 * a call object, or the rejection. @internal
 */
export type Ticket<T> = number | AdmittedCall<T> | CallRejectedError;

/** A ticket now, or once a bulkhead slot is free (the only stage that waits). @internal */
export type Admission<T> = Ticket<T> | Promise<Ticket<T>>;

/** How a call came in. A call may take the plain path (a token, no call object). @internal */
export const MAY_BE_PLAIN = 1;
/** How a call came in. A call may wait in a bulkhead's queue (its caller can wait for a promise). @internal */
export const MAY_WAIT = 2;
/** `execute()` and a decorated method: either may be plain, either may wait. @internal */
export const EXECUTE = MAY_BE_PLAIN | MAY_WAIT;

/**
 * One step of a call's admission, and every step after it: the whole of the
 * pipeline from here on. `signal` is the caller's; `flags` say how the call
 * came in (`MAY_BE_PLAIN`, `MAY_WAIT`). @internal
 */
export type Admit = <T>(
  b: PipelineBreaker,
  signal: AbortSignal | undefined,
  flags: number,
) => Admission<T>;

/** A stage: given the rest of the pipeline, the pipeline from this stage on. @internal */
export type Stage = (next: Admit) => Admit;

/** The stages a configuration uses, outermost first, and the innermost step. @internal */
export interface PipelinePlan {
  readonly stages: readonly Stage[];
  readonly last: Admit;
}

/**
 * Assembles a pipeline: each stage wraps the ones after it, so a call runs
 * through exactly the stages its configuration asked for, and an option that
 * is off costs its calls nothing. @internal
 */
export function assemble(plan: PipelinePlan): Admit {
  let admit = plan.last;
  for (let i = plan.stages.length - 1; i >= 0; i--) admit = plan.stages[i]!(admit);
  return admit;
}

/** Whether a ticket is a call to run, not a rejection nor a plain token. @internal */
export function isAdmittedCall<T>(ticket: Ticket<T>): ticket is AdmittedCall<T> {
  return typeof ticket === 'object' && !(ticket instanceof Error);
}
