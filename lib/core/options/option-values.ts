import type { NumberRule } from './option-checker.js';
import type { ValueCheck } from './option-rules.js';
import { MAX_TIMER_MS as TIMER_LIMIT } from '../calls/timer-delay.js';

/*
 * The checks of single option values, for the tables of option rules: each
 * is made once, with the words of its message, and checks one value through
 * the option checker (which names the subject and the option).
 */

// setTimeout fires at once for anything longer, which would turn a deadline into none.
/** @internal */
export const MAX_TIMER_MS = TIMER_LIMIT;

/** @internal A number within `rule`, described as `expected` when refused. */
export function numberIn(rule: NumberRule, expected: string): ValueCheck<unknown> {
  return (check, option, value, optional) => check.number(option, value, rule, expected, optional);
}

/** @internal */
export const RATIO = numberIn({ min: 0, minExclusive: true, max: 1 }, 'a number in (0, 1]');
/** @internal */
export const UNIT = numberIn({ min: 0, max: 1 }, 'a number in [0, 1]');

/** @internal */
export function integerFrom(min: number): ValueCheck<unknown> {
  return numberIn({ min, integer: true }, `an integer >= ${min}`);
}

/** @internal A finite duration of at least `min` ms. */
export function durationFrom(min: number): ValueCheck<unknown> {
  return numberIn({ min, max: Number.MAX_VALUE }, `a finite number of milliseconds >= ${min}`);
}

/** @internal */
export const POSITIVE_DURATION = numberIn(
  { min: 0, minExclusive: true },
  'a positive, finite number of milliseconds',
);

/** @internal A positive duration a timer can wait (`max` is setTimeout's limit). */
export function timerDuration(max: number): ValueCheck<unknown> {
  return numberIn(
    { min: 0, minExclusive: true, max },
    `a positive number of milliseconds up to ${max}`,
  );
}

/** @internal */
export function aFunction(expected = 'a function'): ValueCheck<unknown> {
  return (check, option, value, optional) => check.func(option, value, expected, optional);
}

/** @internal */
export function oneOf(values: readonly string[]): ValueCheck<unknown> {
  return (check, option, value, optional) => check.oneOf(option, value, values, optional);
}
