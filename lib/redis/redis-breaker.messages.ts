import { describeValue } from '../core/options/option.messages.js';
import { MAX_TIMER_MS } from './redis-breaker.constants.js';

/** The store's operations, as a deadline error names them. */
const OPERATIONS = {
  ping: 'PING',
  write: 'writing transitions',
  read: 'reading shared state',
  permit: 'the probe permit',
  renew: 'renewing the probe permit',
  repair: 'repairing the keys of a breaker',
  order: 'a fleet-wide order',
  reconcile: 'reconcile',
  subscribe: 'SSUBSCRIBE',
  unsubscribe: 'UNSUBSCRIBE',
  quit: 'QUIT',
  end: 'closing the connection',
} as const;

/**
 * Every text the Redis store shows a person: errors, warnings, log lines and
 * what its options must be. Each names the option or the breaker, and each
 * error and warning ends with what to do (an outage needs nothing: sharing
 * resumes by itself, and the warning says so).
 *
 * @internal
 */
export const redisBreakerMessages = {
  /** Who the options belong to, as validation messages start. */
  subject: 'RedisBreakerStore',
  notAnObject: (value: unknown) =>
    `RedisBreakerStore takes an options object ({ redis, ... }), got ${describeValue(value)}: pass one, e.g. new RedisBreakerStore({ redis: new Redis(process.env.REDIS_URL) }).`,
  missingRedis: () =>
    'RedisBreakerStore: option "redis" is required: pass an ioredis client, e.g. new RedisBreakerStore({ redis: new Redis(process.env.REDIS_URL) }).',
  /** What each option must be, as `option "x" must be ...` shows it. */
  expected: {
    client: 'an ioredis client (Redis or Cluster)',
    ownSubscriber:
      'a connection of its own (pub/sub takes a connection over), e.g. redis.duplicate()',
    /** Shown as the value given when `subscriber` is `redis` itself. */
    sameClient: 'the same client as "redis"',
    keyPrefix: 'a string',
    instanceId: 'a non-empty string',
    timer: `an integer number of milliseconds in [1, ${MAX_TIMER_MS}]`,
    maxQueue: 'an integer >= 1',
    logger: 'false or an object with warn() and log() methods',
  },
  shardedWithoutRouting: (option: 'redis' | 'subscriber') =>
    `RedisBreakerStore: option "pubsub" is 'sharded' but "${option}" is a Cluster made without shardedSubscribers: true, so SSUBSCRIBE would reach one node only: make it with new Cluster(nodes, { shardedSubscribers: true }), or use pubsub: 'classic'.`,
  unreachable: (reason: string) =>
    `Redis is unreachable (${reason}): every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back.`,
  resumed: (down: number) =>
    `Redis is reachable again after ${down} ms: circuit breakers share their state again.`,
  /** The reason of an outage (shown in `unreachable`): an operation past its deadline. */
  timedOut: (operation: keyof typeof OPERATIONS, ms: number) =>
    `${OPERATIONS[operation]} did not answer within ${ms} ms (operationTimeoutMs)`,
  /** The reason of an outage (shown in `unreachable`): start-up past its deadline. */
  hydrateTimedOut: (ms: number) =>
    `start-up could not read the shared state within ${ms} ms (hydrateTimeoutMs)`,
  /** The reason of an outage (shown in `unreachable`): a connection closed. */
  connectionClosed: () => 'connection closed',
  /** The reason of an outage (shown in `unreachable`): a command rejected with nothing. */
  failedWithoutError: () => 'failed without an error',
  corruptKeys: (
    breaker: string,
    found: readonly { key: string; type: string; expected: string }[],
    keyPrefix: string,
  ) =>
    `Circuit breaker "${breaker}": Redis held ${found.map((f) => `${article(f.type)} ${f.type} at "${f.key}", where the store keeps ${article(f.expected)} ${f.expected}`).join(', and ')}; ` +
    `the store deleted ${found.length === 1 ? 'it' : 'them'} and the breaker shares its state again. If this comes back, something else writes under keyPrefix ${JSON.stringify(keyPrefix)}: give the store a keyPrefix of its own.`,
  keyError: (breaker: string, keys: readonly string[], reason: string) =>
    `Circuit breaker "${breaker}": Redis rejects the store's operations on its keys (${reason}); the breaker decides on its own and the store tries again at every reconcile. ` +
    `Look at ${keys.map((key) => `"${key}"`).join(', ')} (redis-cli TYPE, DUMP) and delete what the store did not write.`,
  /** Why a fleet-wide order did not reach Redis (shown in `fleetNotTold`). */
  why: {
    unreachable: 'Redis is unreachable',
    connecting: 'the store is still connecting to Redis',
    closed: 'the store is closed (the application is shutting down)',
    repairing: "the store is repairing this breaker's keys in Redis",
    slotDown:
      "the Redis Cluster node that holds this breaker's keys does not answer (its slot is down; the store tries it again at every reconcile)",
  },
  /** `what`: "forced open", "released", "reconfigured"... */
  fleetNotTold: (breaker: string, what: string, why: string) =>
    `Circuit breaker "${breaker}" is ${what} on this replica only: the other replicas were not told, because ${why.replace(/\.+$/, '')}. ` +
    'Give the order again once Redis is reachable (the store logs "Redis is reachable again"); replicas that miss an order are not told later.',
  fleetClosed: (breaker: string, order: string) =>
    `Circuit breaker "${breaker}": the store is closed (the application is shutting down), so the fleet-wide ${order} changed nothing, here or elsewhere. Give it to a replica that is running.`,
  fleetNotShared: (breaker: string) =>
    `Circuit breaker "${breaker}" is not shared through this store (share: false, or a child of a per-key family), so an order cannot reach the other replicas: ` +
    'order it on each replica without { fleet: true }, or remove share: false.',
  fleetConflict: (breaker: string, attempts: number) =>
    `Circuit breaker "${breaker}" is reconfigured on this replica only: other replicas reconfigured it fleet-wide ${attempts} times while this one tried to. Try again.`,
  fleetConfigRefused: (breaker: string, generation: number, origin: string, reason: string) =>
    `Circuit breaker "${breaker}": this replica cannot apply the fleet's reconfiguration (generation ${generation}, from "${origin}") and keeps its options: ${reason} ` +
    'The other replicas are not affected. Fix the options of this replica (or reconfigure the fleet again with options every replica accepts).',
  fleetPatchNotData: (breaker: string, path: string, value: unknown) =>
    `Circuit breaker "${breaker}": option "${path}" cannot travel to the other replicas (${describeValue(value)}): a fleet-wide reconfiguration carries plain data only (numbers, strings, booleans, and objects and arrays of them). ` +
    'Set it in the options of every replica instead, or reconfigure without { fleet: true }.',
};

function article(type: string): string {
  return /^[aeiou]/.test(type) ? 'an' : 'a';
}
