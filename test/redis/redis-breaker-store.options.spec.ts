import { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  RedisBreakerStore,
  type RedisBreakerPubsub,
  type RedisBreakerStoreOptions,
} from '../../lib/redis/index.js';
import { writerOf } from '../../lib/redis/redis-breaker.commands.js';

// lazyConnect: these clients never open a connection, so no Redis is needed here.
const redis = new Redis({ lazyConnect: true });
afterAll(() => redis.disconnect());

describe('new RedisBreakerStore(options)', () => {
  it('takes the defaults', () => {
    const store = new RedisBreakerStore({ redis, logger: false });
    expect(store.keyPrefix).toBe('circuit-breaker:');
    expect(store.instanceId).toMatch(new RegExp(`:${process.pid}$`));
    expect(store.shared).toBe(false);
    expect(store.storeErrors).toBe(0);
  });

  it.each<[string, unknown, string]>([
    [
      'no object',
      undefined,
      'RedisBreakerStore takes an options object ({ redis, ... }), got undefined: pass one, e.g. new RedisBreakerStore({ redis: new Redis(process.env.REDIS_URL) }).',
    ],
    [
      'no redis',
      {},
      'RedisBreakerStore: option "redis" is required: pass an ioredis client, e.g. new RedisBreakerStore({ redis: new Redis(process.env.REDIS_URL) }).',
    ],
    [
      'a URL as redis',
      { redis: 'redis://localhost' },
      'RedisBreakerStore: option "redis" must be an ioredis client (Redis or Cluster), got "redis://localhost".',
    ],
    [
      'a misspelt option',
      { redis, keyprefix: 'x' },
      'RedisBreakerStore: unknown option "keyprefix". Known options: redis, subscriber, keyPrefix, instanceId, reconcileIntervalMs, operationTimeoutMs, hydrateTimeoutMs, maxQueue, logger, closeClient, pubsub. Did you mean "keyPrefix"?',
    ],
    [
      'redis as its own subscriber',
      { redis, subscriber: redis },
      'RedisBreakerStore: option "subscriber" must be a connection of its own (pub/sub takes a connection over), e.g. redis.duplicate(), got "the same client as \\"redis\\"".',
    ],
    [
      'an empty instanceId',
      { redis, instanceId: '' },
      'RedisBreakerStore: option "instanceId" must be a non-empty string, got "".',
    ],
    [
      'a zero interval',
      { redis, reconcileIntervalMs: 0 },
      'RedisBreakerStore: option "reconcileIntervalMs" must be an integer number of milliseconds in [1, 2147483647], got 0.',
    ],
    [
      'a fractional timeout',
      { redis, operationTimeoutMs: 1.5 },
      'RedisBreakerStore: option "operationTimeoutMs" must be an integer number of milliseconds in [1, 2147483647], got 1.5.',
    ],
    [
      'a negative queue',
      { redis, maxQueue: -1 },
      'RedisBreakerStore: option "maxQueue" must be an integer >= 1, got -1.',
    ],
    [
      'a string as closeClient',
      { redis, closeClient: 'yes' },
      'RedisBreakerStore: option "closeClient" must be a boolean, got "yes".',
    ],
    [
      'console.log as logger',
      { redis, logger: () => undefined },
      'RedisBreakerStore: option "logger" must be false or an object with warn() and log() methods, got a function.',
    ],
  ])('rejects %s with a message naming the option', (_, options, message) => {
    expect(() => new RedisBreakerStore(options as RedisBreakerStoreOptions)).toThrow(
      new TypeError(message),
    );
  });
});

describe('option pubsub', () => {
  // Never connected (lazyConnect): the choice is made from the clients' options alone.
  const sharded = new Cluster([{ host: '127.0.0.1', port: 1 }], {
    lazyConnect: true,
    shardedSubscribers: true,
  });
  const plain = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
  afterAll(() => {
    sharded.disconnect();
    plain.disconnect();
  });

  it.each<[string, boolean, Redis | Cluster, RedisBreakerPubsub | undefined]>([
    ['a single Redis, auto', false, redis, undefined],
    ['a single Redis, sharded (Redis 7+)', true, redis, 'sharded'],
    ['a Cluster with shardedSubscribers, auto', true, sharded, 'auto'],
    ['a Cluster with shardedSubscribers, classic', false, sharded, 'classic'],
    ['a Cluster without shardedSubscribers, auto', false, plain, undefined],
  ])('%s: sharded %s', (_, expected, client, pubsub) => {
    expect(writerOf(client, 'a', 'p:', pubsub === undefined ? {} : { pubsub }).sharded).toBe(
      expected,
    );
    expect(() => new RedisBreakerStore({ redis: client, logger: false, pubsub })).not.toThrow();
  });

  it('refuses sharded on a Cluster that would send every SSUBSCRIBE to one node, naming the client', () => {
    expect(() => new RedisBreakerStore({ redis: plain, pubsub: 'sharded', logger: false })).toThrow(
      `RedisBreakerStore: option "pubsub" is 'sharded' but "redis" is a Cluster made without shardedSubscribers: true, so SSUBSCRIBE would reach one node only: make it with new Cluster(nodes, { shardedSubscribers: true }), or use pubsub: 'classic'.`,
    );
    // The subscriber is the connection that subscribes: a given one decides.
    expect(
      () =>
        new RedisBreakerStore({
          redis: sharded,
          subscriber: plain,
          pubsub: 'sharded',
          logger: false,
        }),
    ).toThrow(/"subscriber" is a Cluster made without shardedSubscribers/);
    expect(writerOf(plain, 'a', 'p:', { subscriber: sharded }).sharded).toBe(true);
  });

  it('refuses an unknown value', () => {
    expect(
      () =>
        new RedisBreakerStore({
          redis,
          pubsub: 'fast' as RedisBreakerPubsub,
          logger: false,
        }),
    ).toThrow(
      `RedisBreakerStore: option "pubsub" must be 'classic', 'sharded' or 'auto', got "fast".`,
    );
  });
});
