import { BreakerHookError, type Breaker } from './core/index.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';

/**
 * The key of a call whose key function found no target: it returned
 * `undefined`, `null` or `''` (a request without the tenant header), threw,
 * or returned something that is not a string. Those calls share the child of
 * this key, as any key's calls share theirs.
 *
 * @publicApi
 */
export const DEFAULT_CIRCUIT_KEY = 'default';

/**
 * The key `keyOf(argument)` gives for `breaker`, or `DEFAULT_CIRCUIT_KEY`. A
 * key function that throws or returns a non-string is the application's bug,
 * not the request's: it is reported once per breaker (as a listener's fault
 * is), and the call goes on under the default key instead of failing.
 *
 * @internal
 */
export function keyFor<A>(breaker: Breaker, keyOf: (argument: A) => unknown, argument: A): string {
  let key: unknown;
  try {
    key = keyOf(argument);
  } catch (fault) {
    breaker.reportFault(
      'key',
      new BreakerHookError(circuitBreakerMessages.keyFunctionThrew(breaker.name, fault), fault),
    );
    return DEFAULT_CIRCUIT_KEY;
  }
  if (typeof key === 'string' && key !== '') return key;
  if (key === undefined || key === null || key === '') return DEFAULT_CIRCUIT_KEY;
  breaker.reportFault(
    'key',
    new BreakerHookError(circuitBreakerMessages.keyNotAString(breaker.name, key), undefined),
  );
  return DEFAULT_CIRCUIT_KEY;
}
