import {
  MAY_BE_PLAIN,
  type Admission,
  type Admit,
  type PipelineBreaker,
  type Stage,
} from '../calls/call-pipeline.js';
import { FaultedCall } from '../calls/faulted-call.js';
import { TrackedCall } from '../calls/tracked-call.js';

/**
 * Fault injection, on a breaker built with `faultInjection: true`: while a
 * fault is injected, an admitted call that gets it (every call, or a share)
 * runs the fault instead of the dependency. With none injected, calls pass
 * straight on, the plain path included. @internal
 */
export const faultStage: Stage = (next: Admit): Admit =>
  function injectedFault<T>(
    b: PipelineBreaker,
    signal: AbortSignal | undefined,
    flags: number,
  ): Admission<T> {
    const plan = b.rare?.faults;
    if (plan === undefined) return next<T>(b, signal, flags);
    // Inside the fault stage no stage waits: the admission is decided now.
    const call = next<T>(b, signal, flags & ~MAY_BE_PLAIN);
    // A rejected call and a call let through uncounted get no fault.
    if (!(call instanceof TrackedCall) || !plan.applies(b)) return call;
    return new FaultedCall<T>(b, call, plan);
  };
