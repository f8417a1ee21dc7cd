import type { BreakerState, RejectionReason } from '../state/breaker-state.js';
import type { StateChangeEvent } from '../events/breaker-events.js';
import type {
  BreakerChannel,
  BreakerRejectedMessage,
  BreakerStateChangeMessage,
} from './breaker-channels.js';

/**
 * Publishes a refusal on `channel`, which someone listens to. A subscriber
 * that throws is the channel's business (Node reports it on the next tick),
 * never the caller's. @internal
 */
export function publishRejection(
  channel: BreakerChannel,
  breaker: string,
  state: BreakerState,
  reason: RejectionReason,
  retryAfterMs: number | undefined,
  error: Error,
): void {
  const message: BreakerRejectedMessage = { breaker, state, reason, retryAfterMs, error };
  publish(channel, message);
}

/** Publishes a transition on `channel`, which someone listens to. @internal */
export function publishStateChange(
  channel: BreakerChannel,
  breaker: string,
  change: StateChangeEvent,
): void {
  const message: BreakerStateChangeMessage = { breaker, ...change };
  publish(channel, message);
}

function publish(channel: BreakerChannel, message: unknown): void {
  try {
    channel.publish(message);
  } catch {
    // A channel given by hand that throws: the call and the transition go on, as with a listener.
  }
}
