import { NOT_TIMED } from '../calls/call-tokens.js';
import {
  MAY_BE_PLAIN,
  type Admission,
  type Admit,
  type PipelineBreaker,
  type Stage,
} from '../calls/call-pipeline.js';
import { TrackedCall } from '../calls/tracked-call.js';
import { HeldCall } from '../calls/held-call.js';
import { UncountedCall } from '../calls/uncounted-call.js';

/**
 * A child of a per-key family, while its family is not closed: the family
 * rejects for every key while open, and while half-open admits its probes
 * through whichever key is asked for. A family probe's call carries the
 * family's permit with it (settled alike); a child's own rejection, or a call
 * it does not record, returns that permit. @internal
 */
export const familyGateStage: Stage = (next: Admit): Admit =>
  function familyGate<T>(
    b: PipelineBreaker,
    signal: AbortSignal | undefined,
    flags: number,
  ): Admission<T> {
    if (!b.underFamilyGate()) return next<T>(b, signal, flags);
    const parent = b.parent!;
    const gate = parent.admitAsFamily();
    if (typeof gate !== 'number') return gate;
    if (gate === 0) return next<T>(b, signal, flags & ~MAY_BE_PLAIN);
    // Inside the family's gate no stage waits: the child's admission is decided now.
    const call = next<T>(b, signal, flags & ~MAY_BE_PLAIN) as Exclude<
      Admission<T>,
      Promise<unknown>
    >;
    // A family probe learns nothing from a call that is not recorded: its permit goes back too.
    if (
      typeof call !== 'object' ||
      call instanceof Error ||
      call instanceof UncountedCall ||
      call instanceof HeldCall
    ) {
      parent.settle(gate, 'ignored', undefined, NOT_TIMED, undefined);
      return call;
    }
    call.parentCall = new TrackedCall<T>(parent, gate, b.timed ? b.monotonic() : NOT_TIMED);
    return call;
  };
