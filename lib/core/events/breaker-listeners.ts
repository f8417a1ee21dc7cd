import {
  BREAKER_EVENT_NAMES,
  BreakerEventHub,
  isBreakerEventName,
  type BreakerEventName,
  type BreakerListener,
} from './breaker-events.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';

/** What listening reads and sets on a breaker. @internal */
export interface ListenedBreaker {
  readonly name: string;
  readonly config: ResolvedBreakerOptions;
  /** Only while someone listens. */
  hub: BreakerEventHub | undefined;
  /** Whether calls must be timed (see `needsTiming`). */
  timed: boolean;
  onListenerError(event: BreakerEventName, fault: unknown): void;
}

/**
 * `breaker.on()`: subscribes `listener` to `event`; returns the function
 * that unsubscribes. Only listeners of events that carry a duration make calls
 * read the clock, and only while they listen.
 *
 * @internal
 */
export function listen<E extends BreakerEventName>(
  b: ListenedBreaker,
  event: E,
  listener: BreakerListener<E>,
): () => void {
  if (!isBreakerEventName(event))
    throw new TypeError(breakerMessages.unknownEvent(b.name, event, BREAKER_EVENT_NAMES));
  if (typeof listener !== 'function')
    throw new TypeError(breakerMessages.notAListener(b.name, event, listener));
  const hub = (b.hub ??= new BreakerEventHub((name, fault) => b.onListenerError(name, fault)));
  if (event === 'success' || event === 'failure' || event === 'ignored' || event === 'slowCall')
    b.timed = true;
  const off = hub.add(event, listener);
  return () => {
    off();
    // A listener that comes and goes must not slow the breaker for good.
    if (b.hub !== hub) return;
    if (hub.isEmpty()) b.hub = undefined;
    b.timed = needsTiming(b);
  };
}

/**
 * Whether calls must be timed: slow-call detection, a time window, or
 * listeners of durations.
 *
 * @internal
 */
export function needsTiming(b: Pick<ListenedBreaker, 'config' | 'hub'>): boolean {
  const hub = b.hub;
  return (
    b.config.slowCallDurationMs !== undefined ||
    b.config.window.type === 'time' ||
    (hub !== undefined &&
      (hub.has('success') || hub.has('failure') || hub.has('ignored') || hub.has('slowCall')))
  );
}
