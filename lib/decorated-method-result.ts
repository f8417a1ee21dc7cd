import { isObservable } from 'rxjs';
import type { CallOutcome, CallPermit } from './core/index.js';
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
