import {
  MAY_WAIT,
  isAdmittedCall,
  type Admission,
  type Admit,
  type PipelineBreaker,
  type Stage,
  type Ticket,
} from '../calls/call-pipeline.js';
import { HeldCall } from '../calls/held-call.js';
import { UncountedCall } from '../calls/uncounted-call.js';
import { DISMISSED, GRANTED, type Bulkhead } from './bulkhead.js';

/**
 * The concurrency cap (`bulkhead`): a call takes a free slot and gives it
 * back when it settles, or waits in the queue for one (a caller that cannot
 * wait, `acquire()`, is refused at once: `bulkhead-full`). A call forced
 * `disabled` passes uncounted and holds no slot. @internal
 */
export const bulkheadStage: Stage = capStage(false);

/**
 * The adaptive cap (`bulkhead.algorithm`): the bulkhead's stage, whose calls
 * also tell the cap's algorithm how long they held their slot and how they
 * ended. A separate stage, so that a fixed cap's calls pay nothing for it. @internal
 */
export const adaptiveBulkheadStage: Stage = capStage(true);

/** The bulkhead's stage; `measured`: its calls are measured for an adaptive cap. */
function capStage(measured: boolean): Stage {
  return (next: Admit): Admit =>
    function bulkheadCap<T>(
      b: PipelineBreaker,
      signal: AbortSignal | undefined,
      flags: number,
    ): Admission<T> {
      const bulkhead = b.rare?.parts?.bulkhead;
      if (bulkhead === undefined) return next<T>(b, signal, flags);
      // A call holding a slot runs in a call object, which gives the slot back as it settles.
      const holding = (): Ticket<T> => hold(b, next<T>(b, signal, flags), bulkhead, measured);
      if (bulkhead.tryEnter()) return holding();
      if (b.lettingAllThrough) return next<T>(b, signal, flags);
      if ((flags & MAY_WAIT) === 0) return b.stateRefusal() ?? b.reject('bulkhead-full', undefined);
      return queue(b, bulkhead, signal, holding);
    };
}

/**
 * `ticket`, holding a slot of `bulkhead` until it settles (given back at once
 * when it holds none); `measured`, the call's measurement goes to the
 * adaptive cap's algorithm as it settles.
 */
function hold<T>(
  b: PipelineBreaker,
  ticket: Admission<T>,
  bulkhead: Bulkhead,
  measured: boolean,
): Ticket<T> {
  // The stages inside the bulkhead decide at once: only the bulkhead itself waits.
  const call = ticket as Ticket<T>;
  if (typeof call === 'number')
    return new HeldCall<T>(b, call, measured ? bulkhead.sampled() : bulkhead.leave);
  // A call let through uncounted (forced disabled) holds no slot: it is not the breaker's to cap.
  if (!isAdmittedCall(call) || call instanceof UncountedCall) bulkhead.leave();
  else call.onSettled = measured ? bulkhead.sampled() : bulkhead.leave;
  return call;
}

/**
 * Waits in the queue, then takes the slot handed over; `bulkhead-full` when
 * full or too long. The state decides first: a call it refuses never waits,
 * and the waiters are refused when the breaker opens.
 */
function queue<T>(
  b: PipelineBreaker,
  bulkhead: Bulkhead,
  signal: AbortSignal | undefined,
  holding: () => Ticket<T>,
): Admission<T> {
  if (!bulkhead.canQueue) return b.reject('bulkhead-full', undefined);
  const refusal = b.stateRefusal();
  if (refusal !== undefined) return refusal;
  return bulkhead.wait(signal).then((how): Admission<T> => {
    if (how === DISMISSED) {
      try {
        const now = b.stateRefusal();
        if (now !== undefined) throw now;
        // Let in again before this turn came: it takes a free slot, or its place in the queue anew.
        return bulkhead.tryEnter() ? holding() : queue(b, bulkhead, signal, holding);
      } finally {
        bulkhead.rejoined();
      }
    }
    if (how !== GRANTED) throw b.reject('bulkhead-full', undefined);
    // Aborted after the slot was handed over but before this turn: as an abort in the queue, nothing is counted.
    if (signal?.aborted) {
      bulkhead.leave();
      throw signal.reason;
    }
    return holding();
  });
}
