import { BreakerHookError, FAMILY_DEFAULT_KEY, type Breaker } from './core/index.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';

/**
 * The key `keyOf(argument)` gives for `breaker`, or `FAMILY_DEFAULT_KEY`. A
 * key function that throws or returns a non-string is the application's bug,
 * not the request's: it is reported once per site (`site`: where the key
 * option was given; two sites sharing a breaker are two bugs), as a
 * listener's error is, and the call goes on under the default key instead of
 * failing. A finite number is a key as its string (a numeric tenant id).
 *
 * @internal
 */
export function keyFor<A>(
  breaker: Breaker,
  site: string,
  keyOf: (argument: A) => unknown,
  argument: A,
): string {
  let key: unknown;
  try {
    key = keyOf(argument);
  } catch (fault) {
    return keyThrew(breaker, site, fault);
  }
  return typeof key === 'string' && key !== '' ? key : checkedKey(breaker, site, key);
}

/** `keyFor()` for a method's key option, `keyOf.apply(thisArg, args)`, without a closure per call. @internal */
export function methodKeyFor(
  breaker: Breaker,
  site: string,
  keyOf: (...args: any[]) => unknown,
  thisArg: unknown,
  args: unknown[],
): string {
  let key: unknown;
  try {
    key = Reflect.apply(keyOf, thisArg, args);
  } catch (fault) {
    return keyThrew(breaker, site, fault);
  }
  return typeof key === 'string' && key !== '' ? key : checkedKey(breaker, site, key);
}

function keyThrew(breaker: Breaker, site: string, fault: unknown): string {
  breaker.reportHookError(
    `key@${site}`,
    new BreakerHookError(
      circuitBreakerMessages.keyFunctionThrew(breaker.name, site, fault, FAMILY_DEFAULT_KEY),
      fault,
    ),
  );
  return FAMILY_DEFAULT_KEY;
}

/** What is not a non-empty string: nothing (the default key), a number's string, or an error of the site. */
function checkedKey(breaker: Breaker, site: string, key: unknown): string {
  if (key === undefined || key === null || key === '') return FAMILY_DEFAULT_KEY;
  if (typeof key === 'number' && Number.isFinite(key)) return String(key);
  breaker.reportHookError(
    `key@${site}`,
    new BreakerHookError(
      circuitBreakerMessages.keyNotAString(breaker.name, site, key, FAMILY_DEFAULT_KEY),
      undefined,
    ),
  );
  return FAMILY_DEFAULT_KEY;
}
