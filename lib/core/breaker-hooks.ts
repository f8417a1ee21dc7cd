import { BreakerCalls } from './breaker-calls.js';
import {
  BREAKER_EVENT_NAMES,
  BreakerEventHub,
  isBreakerEventName,
  type BreakerEventName,
  type BreakerListener,
} from './breaker-events.js';
import { breakerMessages } from './breaker.messages.js';

/**
 * What the application attaches to a breaker: its listeners (`on()`), and
 * whether they make calls read the clock. Between the calls and the public
 * face, so that `Breaker` keeps to running calls, control and snapshots.
 *
 * Not exported; kept in the declarations because `Breaker` extends it.
 */
export abstract class BreakerHooks extends BreakerCalls {
  /** Subscribes to an event; returns the function that unsubscribes. */
  on<E extends BreakerEventName>(event: E, listener: BreakerListener<E>): () => void {
    if (!isBreakerEventName(event))
      throw new TypeError(breakerMessages.unknownEvent(this.name, event, BREAKER_EVENT_NAMES));
    if (typeof listener !== 'function')
      throw new TypeError(breakerMessages.notAListener(this.name, event, listener));
    const hub = (this.hub ??= new BreakerEventHub((name, fault) =>
      this.onListenerFault(name, fault),
    ));
    // Only events that carry a duration make calls read the clock.
    if (event === 'success' || event === 'failure' || event === 'ignored' || event === 'slowCall')
      this.timed = true;
    const off = hub.add(event, listener);
    return () => {
      off();
      // A listener that comes and goes must not slow the breaker for good.
      if (this.hub !== hub) return;
      if (hub.isEmpty()) this.hub = undefined;
      this.timed = this.needsTiming();
    };
  }

  /** Whether calls must be timed: slow-call detection, a time window, or listeners of durations. */
  protected needsTiming(): boolean {
    const hub = this.hub;
    return (
      this.config.slowCallDurationMs !== undefined ||
      this.config.window.type === 'time' ||
      (hub !== undefined &&
        (hub.has('success') || hub.has('failure') || hub.has('ignored') || hub.has('slowCall')))
    );
  }
}
