import type { Cluster, Redis } from 'ioredis';

/**
 * How signals travel: `'classic'` (`PUBLISH` on one channel of the prefix,
 * which a Redis Cluster broadcasts to every node), `'sharded'` (Redis 7+:
 * `SPUBLISH` on a channel per breaker, in the breaker's slot, so that a
 * transition reaches only the node owning it; on a Cluster the client must be
 * made with ioredis `shardedSubscribers: true`), or `'auto'`: sharded on such
 * a Cluster client, classic otherwise. Every replica of one prefix must use
 * the same. @publicApi
 */
export type RedisBreakerPubsub = 'classic' | 'sharded' | 'auto';

/** Where the store writes its warnings; Nest's `Logger` fits. @publicApi */
export interface RedisBreakerStoreLogger {
  warn(message: string): void;
  log(message: string): void;
}

/**
 * Options of `new RedisBreakerStore()`.
 *
 * @publicApi
 */
export interface RedisBreakerStoreOptions {
  /**
   * The ioredis client (5 or 6; a `Cluster` too) the store sends its writes and
   * reads with. It stays yours (`close()` does not quit it) unless `closeClient`.
   */
  redis: Redis | Cluster;
  /**
   * Also quit `redis` on `close()`: for a client made for the store alone, e.g.
   * in a `forRootAsync` factory, which has nowhere else to close it. Default `false`.
   */
  closeClient?: boolean;
  /**
   * The connection that receives other replicas' signals (pub/sub needs a
   * connection of its own). Default: `redis.duplicate()`, which the store
   * quits on `close()`.
   */
  subscriber?: Redis | Cluster;
  /** Namespaces keys and the channel, so that applications can share one Redis. Default `'circuit-breaker:'`. */
  keyPrefix?: string;
  /**
   * This replica's name in the quorum: replicas with the same id count once.
   * Default `<hostname>:<pid>`; set a stable one (a pod name) if you prefer.
   */
  instanceId?: string;
  /**
   * How often the replica asks Redis what changed since it last looked (one
   * command when nothing did, whatever the number of breakers) and reads those
   * breakers back, repairing missed signals. Default 5,000.
   */
  reconcileIntervalMs?: number;
  /** A store operation slower than this counts as failed: breakers decide locally. Default 1,000. */
  operationTimeoutMs?: number;
  /** How long start-up waits for Redis in all, connecting and reading the shared state, before serving with local state. Default 2,000. */
  hydrateTimeoutMs?: number;
  /** How many breakers may wait with an unwritten transition. Default 1,000. */
  maxQueue?: number;
  /** How signals travel (see `RedisBreakerPubsub`). Default `'auto'`. */
  pubsub?: RedisBreakerPubsub;
  /** Where the one warning per outage goes; `false` for none. Default: Nest's `Logger` ('CircuitBreakerRedisStore'). */
  logger?: RedisBreakerStoreLogger | false;
}
