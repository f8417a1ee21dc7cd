import { describeValue } from '../core/option.messages.js';

/**
 * Every text the Redis store shows a person: each names the option or the
 * breaker and says what to do.
 *
 * @internal
 */
export const redisBreakerMessages = {
  notAnObject: (value: unknown) => `RedisBreakerStore takes an options object ({ redis, ... }), got ${describeValue(value)}.`,
  invalidOption: (option: string, expected: string, value: unknown) => `RedisBreakerStore: option "${option}" must be ${expected}, got ${describeValue(value)}.`,
  missingRedis: () =>
    'RedisBreakerStore: option "redis" is required: pass an ioredis client, e.g. new RedisBreakerStore({ redis: new Redis(process.env.REDIS_URL) }).',
  unreachable: (reason: string) =>
    `Redis is unreachable (${reason}): every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back.`,
  resumed: (down: number) => `Redis is reachable again after ${down} ms: circuit breakers share their state again.`,
  timedOut: (what: string, ms: number) => `${what} did not answer within ${ms} ms (operationTimeoutMs)`,
  hydrateTimedOut: (ms: number) => `start-up could not read the shared state within ${ms} ms (hydrateTimeoutMs)`,
  closed: () => 'the store is closed',
  corruptKeys: (breaker: string, found: readonly { key: string; type: string; expected: string }[], keyPrefix: string) =>
    `Circuit breaker "${breaker}": Redis held ${found.map((f) => `${article(f.type)} ${f.type} at "${f.key}", where the store keeps ${article(f.expected)} ${f.expected}`).join(', and ')}; ` +
    `the store deleted ${found.length === 1 ? 'it' : 'them'} and the breaker shares its state again. If this comes back, something else writes under keyPrefix ${JSON.stringify(keyPrefix)}: give the store a keyPrefix of its own.`,
  keyError: (breaker: string, keys: readonly string[], reason: string) =>
    `Circuit breaker "${breaker}": Redis rejects the store's operations on its keys (${reason}); the breaker decides on its own and the store tries again at every reconcile. ` +
    `Look at ${keys.map((key) => `"${key}"`).join(', ')} (redis-cli TYPE, DUMP) and delete what the store did not write.`,
};

function article(type: string): string {
  return /^[aeiou]/.test(type) ? 'an' : 'a';
}
