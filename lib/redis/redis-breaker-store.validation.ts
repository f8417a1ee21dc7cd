import type { Cluster, Redis } from 'ioredis';
import { OptionChecker } from '../core/options/option-checker.js';
import type { RedisBreakerStoreOptions } from './redis-breaker-store-options.interface.js';
import { MAX_TIMER_MS } from './redis-breaker.constants.js';
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
  'pubsub',
] as const satisfies readonly (keyof RedisBreakerStoreOptions)[];

/** Checks every option and returns them as a plain copy, read once. @internal */
export function validateOptions(given: RedisBreakerStoreOptions): RedisBreakerStoreOptions {
  const expected = messages.expected;
  const check = new OptionChecker(messages.subject);
  if (!check.isPlainObject('options', given)) throw new TypeError(messages.notAnObject(given));
  const options = check.record('', given, KNOWN_OPTIONS) as Partial<RedisBreakerStoreOptions>;
  const client = (name: string, value: unknown) =>
    check.service<Client>(name, value, ['eval', 'hgetall', 'on'], expected.client, false);
  if (options.redis === undefined) throw new TypeError(messages.missingRedis());
  const redis = client('redis', options.redis);
  if (
    options.subscriber === undefined &&
    typeof check.read(redis, 'duplicate', 'redis') !== 'function'
  )
    check.invalid('redis', redis, expected.client, false);
  if (options.subscriber !== undefined) {
    client('subscriber', options.subscriber);
    if (options.subscriber === options.redis)
      check.invalid('subscriber', expected.sameClient, expected.ownSubscriber, false);
  }
  if (options.keyPrefix !== undefined)
    check.string('keyPrefix', options.keyPrefix, expected.keyPrefix);
  if (options.instanceId !== undefined)
    check.string('instanceId', options.instanceId, expected.instanceId, (id) => id !== '');
  for (const name of ['reconcileIntervalMs', 'operationTimeoutMs', 'hydrateTimeoutMs'] as const) {
    if (options[name] !== undefined)
      check.number(
        name,
        options[name],
        { min: 1, max: MAX_TIMER_MS, integer: true },
        expected.timer,
      );
  }
  if (options.maxQueue !== undefined)
    check.number('maxQueue', options.maxQueue, { min: 1, integer: true }, expected.maxQueue);
  if (options.closeClient !== undefined) check.boolean('closeClient', options.closeClient);
  if (options.pubsub !== undefined)
    check.oneOf('pubsub', options.pubsub, ['classic', 'sharded', 'auto'] as const);
  if (options.logger !== undefined && options.logger !== false)
    check.service('logger', options.logger, ['warn', 'log'], expected.logger);
  return options as RedisBreakerStoreOptions;
}
