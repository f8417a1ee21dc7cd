export { BREAKER_CHANNEL_NAMES, breakerChannels } from './breaker-channels.js';
export type {
  BreakerChannel,
  BreakerChannels,
  BreakerCallMessage,
  BreakerRejectedMessage,
  BreakerStateChangeMessage,
} from '../core/index.js';
