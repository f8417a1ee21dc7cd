import { BREAKER_DEFAULTS, type WindowOptions } from './breaker-options.js';
import type { OptionChecker } from './option-checker.js';
import { MAX_TIMER_MS as TIMER_LIMIT } from './timer-delay.js';

/*
 * Readers of single option values: each checks one value against what it
 * must be (through the option checker, which names the breaker and the
 * option) and returns it, or its default. Internal.
 */

// setTimeout fires at once for anything longer, which would turn a deadline into none.
/** @internal */
export const MAX_TIMER_MS = TIMER_LIMIT;

/** @internal The option, or its default when not given: `undefined` only, so that a `null` reaches its check and is refused. */
export function or<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

/** @internal */
export function ratio(check: OptionChecker, option: string, value: unknown): number {
  return check.number(option, value, { min: 0, minExclusive: true, max: 1 }, 'a number in (0, 1]');
}

/** @internal */
export function integer(check: OptionChecker, option: string, value: unknown, min: number): number {
  return check.number(option, value, { min, integer: true }, `an integer >= ${min}`);
}

/** @internal */
export function duration(
  check: OptionChecker,
  option: string,
  value: unknown,
  min: number,
): number {
  return check.number(
    option,
    value,
    { min, max: Number.MAX_VALUE },
    `a finite number of milliseconds >= ${min}`,
  );
}

/** @internal A positive duration or nothing; `max` keeps it within what a timer can wait. */
export function optionalDuration(
  check: OptionChecker,
  option: string,
  value: unknown,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const expected =
    max === MAX_TIMER_MS
      ? `a positive number of milliseconds up to ${MAX_TIMER_MS}`
      : 'a positive, finite number of milliseconds';
  return check.number(option, value, { min: 0, minExclusive: true, max }, expected);
}

/** @internal */
export function resolveWindow(
  check: OptionChecker,
  value: WindowOptions | undefined,
): Readonly<Required<WindowOptions>> {
  if (value === undefined)
    return Object.freeze({ type: 'count', size: BREAKER_DEFAULTS.windowSize });
  if (value.type === 'count') {
    // A byte per slot: a million slots is already far past any useful window.
    const size = check.number(
      'window.size',
      value.size,
      { min: 1, max: 1_000_000, integer: true },
      'an integer in [1, 1000000]',
      false,
    );
    return Object.freeze({ type: 'count', size });
  }
  const buckets = check.number(
    'window.buckets',
    or(value.buckets, BREAKER_DEFAULTS.timeWindowBuckets),
    { min: 1, max: 1000, integer: true },
    'an integer in [1, 1000]',
  );
  const durationMs = check.number(
    'window.durationMs',
    value.durationMs,
    { min: buckets, max: Number.MAX_VALUE },
    `a finite number of milliseconds >= ${buckets}`,
    false,
  );
  return Object.freeze({ type: 'time', durationMs, buckets });
}

/** @internal `share.quorum`: a number of replicas, or `'auto'` (the store counts the replicas that report). */
export function quorumOf(check: OptionChecker, value: unknown): number | 'auto' {
  if (value === 'auto') return 'auto';
  return check.number(
    'share.quorum',
    value,
    { min: 1, integer: true },
    "an integer >= 1 or 'auto'",
  );
}
