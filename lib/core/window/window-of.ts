import type { ResolvedBreakerOptions } from '../options/resolved-breaker-options.interface.js';
import { CountWindow } from './count-window.js';
import type { OutcomeWindow } from './outcome-window.interface.js';
import { TimeWindow } from './time-window.js';

/** The window a breaker's options ask for, starting empty at `now`. @internal */
export function windowOf(config: ResolvedBreakerOptions, now: number): OutcomeWindow {
  const w = config.window;
  return w.type === 'count'
    ? new CountWindow(w.size)
    : new TimeWindow(w.durationMs, w.buckets, now);
}

/** Whether two windows have the same shape, so that one's counts mean the same in the other. @internal */
export function sameWindow(
  a: ResolvedBreakerOptions['window'],
  b: ResolvedBreakerOptions['window'],
): boolean {
  return a.type === 'count'
    ? b.type === 'count' && a.size === b.size
    : b.type === 'time' && a.durationMs === b.durationMs && a.buckets === b.buckets;
}
