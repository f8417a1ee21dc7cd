import type { TransitionReason } from './breaker-state.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import type { OutcomeWindow } from '../window/outcome-window.interface.js';

/**
 * Whether a closed breaker must open now, and why: the failure streak, then
 * the failure rate, then the slow-call rate, each judged only once the window
 * holds `minimumThroughput` calls (the streak needs no population).
 *
 * @internal
 */
export function tripReason(
  config: ResolvedBreakerOptions,
  window: OutcomeWindow,
  consecutiveFailures: number,
  clock: { monotonic(): number },
): TransitionReason | undefined {
  if (config.consecutiveFailures !== undefined && consecutiveFailures >= config.consecutiveFailures)
    return 'consecutive-failures';
  // The slow-call rule stands on its own: configuring it is asking for it, whatever the failure rules.
  if (!config.rateRule && config.slowCallRateThreshold === undefined) return undefined;
  // A time window forgets by the clock: read it only when there is a window to age.
  if (config.window.type === 'time') window.refresh(clock.monotonic());
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
