import type { Redis } from 'ioredis';
import type { RedisBreakerStoreOptions } from './redis-breaker-store-options.interface.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';

const KNOWN_OPTIONS = [
  'redis',
  'subscriber',
  'keyPrefix',
  'instanceId',
  'reconcileIntervalMs',
  'operationTimeoutMs',
  'hydrateTimeoutMs',
  'maxQueue',
  'logger',
  'closeClient',
] as const satisfies readonly (keyof RedisBreakerStoreOptions)[];
// setTimeout fires at once for anything longer.
const MAX_TIMER_MS = 2_147_483_647;

/** Throws a TypeError naming the first option of `options` that is unknown or invalid. @internal */
export function validateOptions(options: RedisBreakerStoreOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(messages.notAnObject(options));
  for (const key of Object.keys(options)) {
    if (!(KNOWN_OPTIONS as readonly string[]).includes(key)) throw new TypeError(messages.unknownOption(key, KNOWN_OPTIONS));
  }
  const client = (name: string, value: unknown) => {
    const c = value as Partial<Redis> | null;
    if (typeof c !== 'object' || c === null || typeof c.eval !== 'function' || typeof c.hgetall !== 'function' || typeof c.on !== 'function') {
      throw new TypeError(messages.invalidOption(name, 'an ioredis client (Redis or Cluster)', value));
    }
  };
  if (options.redis === undefined) throw new TypeError(messages.missingRedis());
  client('redis', options.redis);
  if (typeof (options.redis as Partial<Redis>).duplicate !== 'function' && options.subscriber === undefined) {
    throw new TypeError(messages.invalidOption('redis', 'an ioredis client (Redis or Cluster)', options.redis));
  }
  if (options.subscriber !== undefined) {
    client('subscriber', options.subscriber);
    if (options.subscriber === options.redis) {
      throw new TypeError(messages.invalidOption('subscriber', 'a connection of its own (pub/sub takes a connection over), e.g. redis.duplicate()', 'the same client as "redis"'));
    }
  }
  if (options.keyPrefix !== undefined && typeof options.keyPrefix !== 'string') throw new TypeError(messages.invalidOption('keyPrefix', 'a string', options.keyPrefix));
  if (options.instanceId !== undefined && (typeof options.instanceId !== 'string' || options.instanceId === '')) {
    throw new TypeError(messages.invalidOption('instanceId', 'a non-empty string', options.instanceId));
  }
  for (const name of ['reconcileIntervalMs', 'operationTimeoutMs', 'hydrateTimeoutMs'] as const) {
    const value = options[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMER_MS)) {
      throw new TypeError(messages.invalidOption(name, `an integer number of milliseconds in [1, ${MAX_TIMER_MS}]`, value));
    }
  }
  const max = options.maxQueue;
  if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) throw new TypeError(messages.invalidOption('maxQueue', 'an integer >= 1', max));
  if (options.closeClient !== undefined && typeof options.closeClient !== 'boolean') throw new TypeError(messages.invalidOption('closeClient', 'a boolean', options.closeClient));
  const logger = options.logger;
  if (logger !== undefined && logger !== false && (typeof logger !== 'object' || logger === null || typeof logger.warn !== 'function' || typeof logger.log !== 'function')) {
    throw new TypeError(messages.invalidOption('logger', 'false or an object with warn() and log() methods', logger));
  }
}
