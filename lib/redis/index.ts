// nestjs-circuit-breaker/redis: needs the optional peer ioredis ^5 or ^6.
export { RedisBreakerStore } from './redis-breaker.store.js';
export { REDIS_BREAKER_STORE_DEFAULTS } from './redis-breaker.constants.js';
export type {
  RedisBreakerPubsub,
  RedisBreakerStoreLogger,
  RedisBreakerStoreOptions,
} from './redis-breaker-store-options.interface.js';
export { FleetOrderError } from './redis-breaker.errors.js';
export type { FleetOrderKind } from './redis-breaker.errors.js';
export type { FleetBreaker, FleetReplica, FleetView } from '../interfaces/fleet-view.interface.js';
export type { FleetControl } from '../interfaces/fleet-control.interface.js';
