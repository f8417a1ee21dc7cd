import type { BreakerState, RejectionReason } from '../state/breaker-state.js';
import type { StateChangeEvent } from '../events/breaker-events.js';

/**
 * A channel a breaker publishes to. Node's `diagnostics_channel` channels have
 * this shape; `breakerChannels()` of `nestjs-circuit-breaker/diagnostics` gives the package's own.
 *
 * @publicApi
 */
export interface BreakerChannel {
  /** Read before each message: with nobody subscribed, nothing is built or published. */
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

/**
 * Where breakers publish what they decide, for tracers and APM agents that
 * subscribe without depending on this package (`deps.channels`; under Nest,
 * every breaker of the module publishes on `CIRCUIT_BREAKER_CHANNELS`).
 *
 * @publicApi
 */
export interface BreakerChannels {
  /** A call was refused: a `BreakerRejectedMessage`. */
  readonly rejected: BreakerChannel;
  /** A breaker changed state: a `BreakerStateChangeMessage`. */
  readonly stateChange: BreakerChannel;
  /**
   * A call came to `execute()`, `acquire()` or a decorated method: a
   * `BreakerCallMessage`, before the breaker decides. Optional: channels
   * without it (and without `callSettle`) cost a call nothing.
   */
  readonly callStart?: BreakerChannel;
  /** That call settled (a permit: when it was settled): the same `BreakerCallMessage` as its `callStart`, with `result` or `error` set. */
  readonly callSettle?: BreakerChannel;
}

/**
 * What `BreakerChannels.callStart` and `callSettle` publish for one call of
 * `execute()` or `acquire()`: one object for both (as Node's tracing channels pass one
 * context), so a subscriber can keep its span or its start time on it.
 *
 * @publicApi
 */
export interface BreakerCallMessage {
  /** The breaker's name (`family[key]` for a child of a per-key family). */
  readonly breaker: string;
  /** Set before `callSettle` when the call resolved: its value. */
  result?: unknown;
  /**
   * Set before `callSettle` when the call rejected: the function's error, or
   * the breaker's `CallRejectedError` or `CallTimeoutError`, or the caller's
   * abort reason.
   */
  error?: unknown;
}

/** What `BreakerChannels.rejected` publishes for each refused call. @publicApi */
export interface BreakerRejectedMessage {
  /** The breaker's name (`family[key]` for a child of a per-key family). */
  readonly breaker: string;
  readonly state: BreakerState;
  readonly reason: RejectionReason;
  /** When a call may be admitted again, if the breaker knows. */
  readonly retryAfterMs: number | undefined;
  /** What the caller is rejected with. */
  readonly error: Error;
}

/** What `BreakerChannels.stateChange` publishes for each transition: the `stateChange` event and the breaker's name. @publicApi */
export interface BreakerStateChangeMessage extends StateChangeEvent {
  readonly breaker: string;
}
