import { channel } from 'node:diagnostics_channel';
import type { BreakerChannels } from '../core/index.js';

/**
 * The names of the diagnostics channels breakers publish on: subscribe with
 * `diagnostics_channel.subscribe(BREAKER_CHANNEL_NAMES.rejected, onMessage)`
 * without importing anything else of this package.
 *
 * @publicApi
 */
export const BREAKER_CHANNEL_NAMES = Object.freeze({
  /** A call was refused: a `BreakerRejectedMessage`. */
  rejected: 'nestjs-circuit-breaker:rejected',
  /** A breaker changed state: a `BreakerStateChangeMessage`. */
  stateChange: 'nestjs-circuit-breaker:state-change',
  /** A call came to `execute()` or `acquire()`: a `BreakerCallMessage`. */
  callStart: 'nestjs-circuit-breaker:call-start',
  /** That call settled: the same `BreakerCallMessage`, with `result` or `error`. */
  callSettle: 'nestjs-circuit-breaker:call-settle',
} as const);

let channels: BreakerChannels | undefined;

/**
 * Node's diagnostics channels of `BREAKER_CHANNEL_NAMES`, for `deps.channels`
 * of breakers built by hand (a Nest module's breakers have them already).
 *
 * @publicApi
 */
export function breakerChannels(): BreakerChannels {
  return (channels ??= Object.freeze({
    rejected: channel(BREAKER_CHANNEL_NAMES.rejected),
    stateChange: channel(BREAKER_CHANNEL_NAMES.stateChange),
    callStart: channel(BREAKER_CHANNEL_NAMES.callStart),
    callSettle: channel(BREAKER_CHANNEL_NAMES.callSettle),
  }));
}
