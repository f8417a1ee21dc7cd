import { isObservable } from 'rxjs';
import { runWithCallSignal } from './call-signal.js';
import type { CallOutcome, CallPermit } from './core/index.js';
import { FaultedCall } from './core/calls/faulted-call.js';
import { isThenable } from './fallback/fallback-runner.js';

/**
 * What a method returned: an Observable, a thenable, or a plain value. A value
 * that cannot be looked at (a getter or a Proxy trap that throws) is a plain
 * value: the caller gets it as it is, and the breaker classifies it.
 *
 * @internal
 */
export function shapeOf(result: unknown): 'observable' | 'thenable' | 'value' {
  try {
    return isObservable(result) ? 'observable' : isThenable(result) ? 'thenable' : 'value';
  } catch {
    return 'value';
  }
}

/** Outcomes a fallback is for: the dependency failed or refused, whether the call rejected or resolved. @internal */
export function countsAsFailed(outcome: CallPermit['outcome']): boolean {
  return outcome === 'failure' || outcome === 'overload';
}

/** How a settled permit's call counts: a deadline the breaker enforced is a failure. @internal */
export function countedAs(outcome: CallPermit['outcome']): CallOutcome {
  return outcome === 'timeout' ? 'failure' : (outcome ?? 'ignored');
}

/**
 * Calls `method` under `permit`: with the call's signal when the permit has a
 * deadline (`eagerSignal`: the method reads it, so it is made at once), and
 * through the permit's injected fault when it has one (`mayWait`: a latency
 * may be waited out, only by a Promise method). Throws what the call throws.
 *
 * @internal
 */
export function callUnder(
  permit: CallPermit,
  method: (...args: any[]) => unknown,
  thisArg: unknown,
  args: unknown[],
  eagerSignal: boolean,
  mayWait: boolean,
): unknown {
  const call = (): unknown =>
    permit.timeoutMs === undefined
      ? method.apply(thisArg, args)
      : runWithCallSignal(permit, () => method.apply(thisArg, args), eagerSignal);
  return permit instanceof FaultedCall ? permit.perform(call, undefined, !mayWait) : call();
}
