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
};
