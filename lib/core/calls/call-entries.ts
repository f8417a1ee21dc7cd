import {
  isAdmittedCall,
  type Admission,
  type PipelineBreaker,
  type Ticket,
} from './call-pipeline.js';
import { deferredRejection } from './deferred-rejection.js';
import { runMethodPlain, runPlain } from './plain-run.js';
import type { CallPermit, ProtectedCall, WithSignal } from './tracked-call.js';

type Method<T> = (...args: any[]) => T | PromiseLike<T>;

/*
 * The three ways into a breaker run the same pipeline and differ only in what
 * they do with its ticket: `execute()` runs a function in it, a decorated
 * method runs the method, `acquire()` hands the call object to its caller.
 */

/** `execute()` past its pipeline: runs `fn` as the ticket says (a rejection settles on the next microtask). @internal */
export function runFunction<T>(
  b: PipelineBreaker,
  admission: Admission<T>,
  fn: ProtectedCall<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (admission instanceof Promise)
    return admission.then((t) =>
      signal?.aborted ? withdrawn(t, signal) : runFunction(b, t, fn, signal),
    );
  if (typeof admission === 'number') return runPlain(b, fn, admission);
  if (admission instanceof Error) return deferredRejection(admission);
  return admission.run(fn, signal);
}

/**
 * A call admitted after a wait whose caller left meanwhile: as an abort in the
 * queue, nothing is counted (the admission is taken back, its slot given back).
 */
function withdrawn<T>(ticket: Ticket<T>, signal: AbortSignal): Promise<T> {
  if (isAdmittedCall(ticket)) ticket.cancel();
  return Promise.reject(signal.reason);
}

/** A decorated method past its pipeline: `method.apply(thisArg, args)` as the ticket says. @internal */
export function runMethod<T>(
  b: PipelineBreaker,
  admission: Admission<T>,
  method: Method<T>,
  thisArg: unknown,
  args: unknown[],
  withSignal: WithSignal<T>,
): Promise<T> {
  if (admission instanceof Promise)
    return admission.then((t) => runMethod(b, t, method, thisArg, args, withSignal));
  if (typeof admission === 'number') return runMethodPlain(b, method, thisArg, args, admission);
  if (admission instanceof Error) return deferredRejection(admission);
  // The context, not its signal: reading the signal is what makes its AbortController.
  return admission.runMethod(withSignal, method, thisArg, args);
}

/** `acquire()` past its pipeline: the call object, or the rejection thrown (a waiting caller: as a promise). @internal */
export function permitOf<T>(admission: Admission<T>): CallPermit<T> | Promise<CallPermit<T>> {
  return admission instanceof Promise ? admission.then(permitFrom) : permitFrom(admission);
}

function permitFrom<T>(ticket: Ticket<T>): CallPermit<T> {
  if (ticket instanceof Error) throw ticket;
  // Never the plain path (a token, a held call): acquire() does not ask for it, since its caller settles the call.
  return ticket as CallPermit<T>;
}
