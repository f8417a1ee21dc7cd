/** Defaults of `RedisBreakerStore`. @publicApi */
export const REDIS_BREAKER_STORE_DEFAULTS = Object.freeze({
  keyPrefix: 'circuit-breaker:',
  /** How often a replica reads back the breakers changed since its last look (the change log), repairing a missed pub/sub message. */
  reconcileIntervalMs: 5_000,
  /** The longest any store operation may take before it counts as failed and breakers decide locally. */
  operationTimeoutMs: 1_000,
  /** How long start-up waits for Redis in all (connecting and reading) before serving with local state. */
  hydrateTimeoutMs: 2_000,
  /** How many breakers may have an unwritten transition; past it the oldest is dropped (and replayed on reconnect). */
  maxQueue: 1_000,
  /** Sharded pub/sub on a Cluster client made with `shardedSubscribers: true`, classic `PUBLISH` elsewhere. */
  pubsub: 'auto' as const,
});

/** The longest timer option: `setTimeout` fires at once for anything longer. @internal */
export const MAX_TIMER_MS = 2_147_483_647;

/** The name the store's default logger writes under. @internal */
export const LOGGER_CONTEXT = 'CircuitBreakerRedisStore';

/**
 * Keys live this long after their last write, so the state of a breaker that
 * no longer exists does not stay in Redis forever. A day is far longer than
 * any open period.
 *
 * @internal
 */
export const KEY_TTL_MS = 86_400_000;

/**
 * How long a probe permit is first held: a claim, renewed to the whole probe
 * deadline only when its holder really half-opens. A replica that wins the
 * permit without traffic for the breaker (the permit is asked for when the open
 * period ends, before any call) blocks the fleet's probe this long at most.
 *
 * @internal
 */
export const PERMIT_CLAIM_MS = 1_000;

/**
 * How much earlier than Redis this replica stops counting on a permit it won:
 * the time its renewal (sent when it half-opens) has to reach Redis before the
 * claim expires there. At most a quarter of the permit, so that a short one
 * stays usable.
 *
 * @internal
 */
export const PERMIT_MARGIN_MS = 250;

/** The version of the signal format; a replica ignores signals of another version. @internal */
export const SIGNAL_VERSION = 1;

/** The suffixes of a breaker's keys and of the store's channel. @internal */
export const KEY_SUFFIX = Object.freeze({
  state: 'state',
  opens: 'opens',
  probe: 'probe',
  force: 'force',
  config: 'config',
  channel: 'signals',
});

/**
 * The shortest wait before asking again for a permit that another replica
 * holds, whatever its remaining time says (`PTTL` answers 0 as it expires, -1
 * for a key without expiry): a zero wait would ask in a loop.
 *
 * @internal
 */
export const PERMIT_RETRY_MIN_MS = 50;

/**
 * How far ahead of a clock a generation (or a time the scripts compare) may
 * be. Generations are the writer's clock (`max(previous + 1, now)`), so a real
 * one is ahead of another replica's clock by that clock's skew at most; one a
 * day ahead comes from a hand edit, a restore or a forged signal. A replica
 * ignores such a signal or state, and the scripts repair such a stored
 * generation: one that near 2^53 would otherwise stop growing (`+ 1` rounds
 * away) and freeze the fleet's coordination.
 *
 * @internal
 */
export const GENERATION_MAX_LEAD_MS = 86_400_000;

/**
 * How far ahead of its own clock a replica trusts the generation it applied
 * last. Further ahead (beyond any sane clock skew), it came from a signal that
 * matches no state Redis holds (forged, or repaired since), and the next read of
 * the state hash replaces it, even with a lower generation.
 *
 * @internal
 */
export const GENERATION_TRUSTED_LEAD_MS = 60_000;

/**
 * How many times a fleet-wide reconfiguration is written again when another
 * replica wrote one in between (it is merged over theirs each time).
 *
 * @internal
 */
export const FLEET_CONFIG_ATTEMPTS = 3;
