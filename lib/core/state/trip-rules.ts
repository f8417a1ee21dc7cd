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
 * Whether a closed breaker must open now, and why: the failure streak (the
 * shorter sudden streak when the window was healthy before it), then the
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
    consecutiveFailures >= suddenStreak(streak) &&
    healthyBefore(config, window, consecutiveFailures)
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
 * Whether the window, apart from the current streak of `failures`, holds at
 * least `minimumThroughput` calls of which at most `HEALTHY_FAILURE_RATE`
 * failed. A window that no longer holds the whole streak (too small, or aged
 * out) tells nothing about what came before it.
 */
function healthyBefore(
  config: ResolvedBreakerOptions,
  window: OutcomeWindow,
  failures: number,
): boolean {
  const before = window.calls - failures;
  const failedBefore = window.failures - failures;
  return (
    failedBefore >= 0 &&
    before >= config.minimumThroughput &&
    failedBefore / before <= HEALTHY_FAILURE_RATE
  );
}
