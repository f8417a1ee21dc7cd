import {
  MAY_BE_PLAIN,
  isAdmittedCall,
  type Admission,
  type Admit,
  type AdmittedCall,
  type PipelineBreaker,
  type Stage,
  type Ticket,
} from '../calls/call-pipeline.js';

/**
 * A family's overflow child with a bulkhead: the family counts each key's
 * calls on it, so that a key moves off the overflow child only when they
 * are over. A key whose evicted child's bulkhead still holds calls (kept for
 * its next child) is capped by it here too: each of its calls takes a slot
 * of it as well, or is refused (`bulkhead-full`) without waiting; before,
 * the key ran its cap there and again here. Every other breaker of the
 * configuration passes straight on. @internal
 */
export const overflowStage: Stage = (next: Admit): Admit =>
  function overflowCount<T>(
    b: PipelineBreaker,
    signal: AbortSignal | undefined,
    flags: number,
  ): Admission<T> {
    const calls = b.overflowCalls;
    const key = calls?.claimOverflowCall();
    if (key === undefined) return next<T>(b, signal, flags);
    const kept = b.lettingAllThrough ? undefined : calls!.keptSlots(key);
    if (kept !== undefined && !kept.tryEnter()) {
      calls!.overflowCallEnded(key);
      return b.reject('bulkhead-full', undefined);
    }
    const end =
      kept === undefined
        ? (): void => calls!.overflowCallEnded(key)
        : (): void => {
            calls!.overflowCallEnded(key);
            kept.leave();
          };
    const admission = next<T>(b, signal, flags & ~MAY_BE_PLAIN);
    if (!(admission instanceof Promise)) return endsWith(admission, end);
    return admission.then(
      (ticket) => endsWith(ticket, end),
      (refusal: unknown) => {
        end();
        throw refusal;
      },
    );
  };

/** `ticket`, which calls `end` as it settles (at once when it is no call). */
function endsWith<T>(ticket: Ticket<T>, end: () => void): Ticket<T> {
  if (!isAdmittedCall(ticket)) {
    end();
    return ticket;
  }
  const call: AdmittedCall<T> = ticket;
  const leave = call.onSettled;
  call.onSettled =
    leave === undefined
      ? end
      : (outcome, subject) => {
          end();
          leave(outcome, subject);
        };
  return call;
}
