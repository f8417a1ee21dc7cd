import type { Cluster, Redis } from 'ioredis';
import { OptionChecker } from '../core/option-checker.js';
import type { RedisBreakerStoreOptions } from './redis-breaker-store-options.interface.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';


type Client = Redis | Cluster;

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

/** Checks every option and returns them as a plain copy, read once. @internal */
export function validateOptions(given: RedisBreakerStoreOptions): RedisBreakerStoreOptions {
  const check = new OptionChecker('RedisBreakerStore');
  if (!check.isPlainObject('options', given)) throw new TypeError(messages.notAnObject(given));
  const options = check.record('', given, KNOWN_OPTIONS) as Partial<RedisBreakerStoreOptions>;
  const client = (name: string, value: unknown) => check.service<Client>(name, value, ['eval', 'hgetall', 'on'], 'an ioredis client (Redis or Cluster)', false);
  if (options.redis === undefined) throw new TypeError(messages.missingRedis());
  const redis = client('redis', options.redis);
  if (options.subscriber === undefined && typeof check.read(redis, 'duplicate', 'redis') !== 'function') check.invalid('redis', redis, 'an ioredis client (Redis or Cluster)', false);
  if (options.subscriber !== undefined) {
    client('subscriber', options.subscriber);
    if (options.subscriber === options.redis) {
      throw new TypeError(messages.invalidOption('subscriber', 'a connection of its own (pub/sub takes a connection over), e.g. redis.duplicate()', 'the same client as "redis"'));
    }
  }
  if (options.keyPrefix !== undefined) check.string('keyPrefix', options.keyPrefix, 'a string');
  if (options.instanceId !== undefined) check.string('instanceId', options.instanceId, 'a non-empty string', (id) => id !== '');
  for (const name of ['reconcileIntervalMs', 'operationTimeoutMs', 'hydrateTimeoutMs'] as const) {
    if (options[name] !== undefined) check.number(name, options[name], { min: 1, max: MAX_TIMER_MS, integer: true }, `an integer number of milliseconds in [1, ${MAX_TIMER_MS}]`);
  }
  if (options.maxQueue !== undefined) check.number('maxQueue', options.maxQueue, { min: 1, integer: true }, 'an integer >= 1');
  if (options.closeClient !== undefined) check.boolean('closeClient', options.closeClient);
  if (options.logger !== undefined && options.logger !== false) {
    check.service('logger', options.logger, ['warn', 'log'], 'false or an object with warn() and log() methods');
  }
  return options as RedisBreakerStoreOptions;
}
