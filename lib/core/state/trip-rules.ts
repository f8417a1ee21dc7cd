import type { TransitionReason } from './breaker-state.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import type { OutcomeWindow } from '../window/outcome-window.interface.js';

/**
 * The most the window may have failed, outside a streak, for that streak to
 * be sudden: a healthy dependency's occasional errors stay under it, and a
 * brownout's share of failures does not.
 *
 * @internal
 */
export const HEALTHY_FAILURE_RATE = 0.1;

/**
 * The most the window may have failed, outside a streak, for the shorter
 * unreachable streak to apply: the shorter the streak, the cleaner the window
 * before it must be, so that a dependency that fails now and then does not
 * string enough of them together by chance (at 5%, four in a row come once in
 * about 160,000 calls; at the 10% a sudden streak allows, once in 10,000).
 *
 * @internal
 */
export const CLEAN_FAILURE_RATE = 0.05;

/**
 * How many failures in a row open a breaker whose window was healthy before
 * them, for a streak rule of `streak` beside the rate rule: a little over
 * half of it (6 of 10), never more than the streak itself.
 *
 * @internal
 */
export function suddenStreak(streak: number): number {
  return Math.min(streak, Math.ceil(streak / 2) + 1);
}

/**
 * How many failures in a row open a breaker whose window was healthy before
 * them when every one of them said the dependency could not be reached (a
 * refused or reset connection, a timeout): a little under half of the streak
 * rule (4 of 10), never fewer than 3 (a healthy dependency resets two
 * connections in a row now and then) nor more than the sudden streak. A
 * brownout answers, if with errors (a 5xx); a dependency that refuses or
 * never answers does not, and each call sent to it is wasted.
 *
 * @internal
 */
export function unreachableStreak(streak: number): number {
  return Math.min(suddenStreak(streak), Math.max(3, Math.ceil(streak / 2) - 1));
}

/**
 * Whether a closed breaker must open now, and why: the failure streak (the
 * shorter sudden streak when the window was healthy before it, shorter still
 * when every failure of it said the dependency could not be reached and the
 * window was clean before it: `unreachable`), then the
 * failure rate, then the slow-call rate, each judged only once the window
 * holds `minimumThroughput` calls (the full streak needs no population).
 *
 * @internal
 */
export function tripReason(
  config: ResolvedBreakerOptions,
  window: OutcomeWindow,
  consecutiveFailures: number,
  clock: { monotonic(): number },
  unreachable = false,
): TransitionReason | undefined {
  const streak = config.consecutiveFailures;
  if (streak !== undefined && consecutiveFailures >= streak) return 'consecutive-failures';
  // The slow-call rule stands on its own: configuring it is asking for it, whatever the failure rules.
  if (!config.rateRule && config.slowCallRateThreshold === undefined) return undefined;
  // A time window forgets by the clock: read it only when there is a window to age.
  if (config.window.type === 'time') window.refresh(clock.monotonic());
  if (
    streak !== undefined &&
    config.rateRule &&
    suddenTrip(config, window, consecutiveFailures, streak, unreachable)
  )
    return 'consecutive-failures';
  const calls = window.calls;
  if (calls < config.minimumThroughput) return undefined;
  // Divide rather than multiply: 55 / 100 >= 0.55 holds, but 55 >= 0.55 * 100 (55.00000000000001) does not.
  if (config.rateRule && window.failures / calls >= config.failureRateThreshold)
    return 'failure-rate';
  if (
    config.slowCallRateThreshold !== undefined &&
    window.slowCalls / calls >= config.slowCallRateThreshold
  )
    return 'slow-call-rate';
  return undefined;
}

/**
 * Whether a streak of `failures` is sudden enough to open the breaker before
 * the full streak rule of `streak`: the unreachable streak after a clean
 * window, or the sudden streak after a healthy one.
 */
function suddenTrip(
  config: ResolvedBreakerOptions,
  window: OutcomeWindow,
  failures: number,
  streak: number,
  unreachable: boolean,
): boolean {
  if (
    unreachable &&
    failures >= unreachableStreak(streak) &&
    healthyBefore(config, window, failures, CLEAN_FAILURE_RATE)
  )
    return true;
  return (
    failures >= suddenStreak(streak) &&
    healthyBefore(config, window, failures, HEALTHY_FAILURE_RATE)
  );
}

/**
 * Whether the window, apart from the current streak of `failures`, holds at
 * least `minimumThroughput` calls of which at most `maxRate` failed. A window
 * that no longer holds the whole streak (too small, or aged out) tells
 * nothing about what came before it.
 */
function healthyBefore(
  config: ResolvedBreakerOptions,
  window: OutcomeWindow,
  failures: number,
  maxRate: number,
): boolean {
  const before = window.calls - failures;
  const failedBefore = window.failures - failures;
  return (
    failedBefore >= 0 && before >= config.minimumThroughput && failedBefore / before <= maxRate
  );
}
