import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import { RedisBreakerStore, type RedisBreakerStoreOptions } from '../../lib/redis/index.js';
import { CHANGE_LOG_MAX, changeKeys } from '../../lib/redis/redis-breaker.changes.js';
import { READ_BATCH } from '../../lib/redis/redis-breaker.reads.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';
import { commandStats } from './helpers/command-stats.js';

// What a reconcile costs Redis, counted by Redis itself (INFO commandstats):
// nothing changed, one command whatever the number of breakers; a change, a
// read of that breaker alone; everything read once, in bounded batches, when
// the change log cannot tell (start-up, Redis lost it, junk).

const available = redisServerAvailable();
const OPTIONS: BreakerOptions = {
  consecutiveFailures: 1,
  openDurationMs: 60_000,
  share: { quorum: 1 },
};
// The periodic reconcile never fires by itself in these tests: each calls it when it counts.
const QUIET: Partial<RedisBreakerStoreOptions> = { reconcileIntervalMs: 600_000 };

let server: RedisServer;
let admin: Redis;
let prefixSeq = 0;
const opened: { store: RedisBreakerStore; redis: Redis; subscriber?: Redis }[] = [];

const commands = () => commandStats(admin);
const resetStats = () => admin.config('RESETSTAT');
const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);

interface Replica {
  store: RedisBreakerStore;
  breakers: Breaker[];
  redis: Redis;
}

async function replica(
  instanceId: string,
  prefix: string,
  count: number,
  storeOptions: Partial<RedisBreakerStoreOptions> = {},
  redis = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 }),
): Promise<Replica> {
  redis.on('error', () => undefined);
  const store = new RedisBreakerStore({
    redis,
    keyPrefix: prefix,
    instanceId,
    logger: false,
    ...QUIET,
    ...storeOptions,
  });
  opened.push({
    store,
    redis,
    ...(storeOptions.subscriber === undefined
      ? {}
      : { subscriber: storeOptions.subscriber as Redis }),
  });
  const breakers = Array.from(
    { length: count },
    (_, i) => new Breaker(`b${i}`, OPTIONS, { coordinator: store.coordinator }),
  );
  await store.hydrate(breakers);
  return { store, breakers, redis };
}

describe.skipIf(!available)(
  'the change log: a reconcile costs what changed, not what exists',
  () => {
    let prefix: string;

    beforeAll(async () => {
      server = await RedisServer.start();
      admin = new Redis(server.port, '127.0.0.1');
    });

    afterAll(async () => {
      await admin?.quit();
      await server?.kill();
    });

    beforeEach(() => {
      prefix = `c${++prefixSeq}:`;
    });

    afterEach(async () => {
      for (const { store, redis, subscriber } of opened.splice(0)) {
        await store.close();
        redis.disconnect();
        subscriber?.disconnect();
      }
    });

    /** Two replicas of `m` breakers, one change made and seen by both: then nothing changes. */
    async function quietFleet(m: number): Promise<Replica[]> {
      const fleet = [await replica('a', prefix, m), await replica('b', prefix, m)];
      await fail(fleet[0]!.breakers[m - 1]!);
      await eventually('b adopting the open', () =>
        fleet[1]!.breakers[m - 1]!.lastDecidedState === 'open' ? true : undefined,
      );
      await Promise.all(fleet.map((r) => r.store.reconcile({ changedOnly: true })));
      return fleet;
    }

    it('costs each replica one command per quiet reconcile, with 10 breakers as with 1,000', async () => {
      const perReplica: Record<number, Record<string, number>> = {};
      for (const m of [10, 1_000]) {
        prefix = `c${++prefixSeq}:`;
        const fleet = await quietFleet(m);
        await resetStats();
        for (let round = 0; round < 5; round++)
          await Promise.all(fleet.map((r) => r.store.reconcile({ changedOnly: true })));
        const calls = await commands();
        perReplica[m] = Object.fromEntries(
          Object.entries(calls).map(([name, n]) => [name, n / fleet.length / 5]),
        );
        // Reading everything (what every reconcile did before, and what reconcile() still does): three hashes per breaker.
        await resetStats();
        await fleet[1]!.store.reconcile();
        expect(await commands()).toEqual({ hmget: 1, hgetall: 3 * m });
        for (const { store } of opened.splice(0)) await store.close();
      }
      expect(perReplica).toEqual({ 10: { hmget: 1 }, 1000: { hmget: 1 } });
    });

    it('reads back only the breaker that changed, and a breaker followed after start-up once', async () => {
      const [a, b] = [await replica('a', prefix, 1_000), await replica('b', prefix, 1_000)];
      await fail(a.breakers[500]!);
      await eventually('b adopting the open', () =>
        b.breakers[500]!.lastDecidedState === 'open' ? true : undefined,
      );
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      // The head, the names changed since, and the three hashes of b500.
      expect(await commands()).toEqual({ hmget: 1, zrangebyscore: 1, hgetall: 3 });
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      expect(await commands()).toEqual({ hmget: 1 });

      // A breaker followed without hydrate() (the engine alone: from its first transition, here a report
      // short of its quorum, which changes nothing of the fleet's) is read at the next reconcile, then no more.
      const late = new Breaker(
        'late',
        { ...OPTIONS, share: { quorum: 2 } },
        { coordinator: b.store.coordinator },
      );
      await fail(late);
      await eventually('the report of late', async () =>
        (await admin.zcard(`${prefix}{late}:opens`)) === 1 ? true : undefined,
      );
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      await b.store.reconcile({ changedOnly: true });
      expect(await commands()).toEqual({ hmget: 2, hgetall: 3 });
    });

    it('repairs a dropped signal at the next reconcile, reading that breaker alone', async () => {
      const subscriber = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 });
      // The subscriber drops the first message it receives (a reconnect, a slow consumer).
      let dropped = 0;
      const emit = subscriber.emit.bind(subscriber);
      subscriber.emit = ((event: string, ...args: unknown[]) => {
        if (event === 'message' && dropped === 0) return (dropped = 1) === 1;
        return emit(event, ...args);
      }) as typeof subscriber.emit;
      const a = await replica('a', prefix, 1_000);
      const b = await replica('b', prefix, 1_000, { subscriber });
      await fail(a.breakers[7]!);
      await eventually('the fleet open in Redis', async () =>
        (await admin.hget(`${prefix}{b7}:state`, 'state')) === 'open' ? true : undefined,
      );
      // Pub/sub keeps order: once b hears a later signal, it has dropped the first.
      await fail(a.breakers[8]!);
      await eventually('b hearing the second signal', () =>
        b.breakers[8]!.lastDecidedState === 'open' ? true : undefined,
      );
      expect([dropped, b.breakers[7]!.lastDecidedState]).toEqual([1, 'closed']);
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      expect(b.breakers[7]!.lastDecidedState).toBe('open');
      expect(b.breakers[7]!.snapshot().lastTransition?.reason).toBe('shared-open');
      // b7 (changed, missed) and b8 (changed, heard): two breakers read, not a thousand.
      expect(await commands()).toEqual({ hmget: 1, zrangebyscore: 1, hgetall: 6 });
    });

    it('repairs a dropped signal within one reconcileIntervalMs by itself', async () => {
      const subscriber = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 });
      let dropped = 0;
      const emit = subscriber.emit.bind(subscriber);
      subscriber.emit = ((event: string, ...args: unknown[]) => {
        if (event === 'message' && dropped === 0) return (dropped = 1) === 1;
        return emit(event, ...args);
      }) as typeof subscriber.emit;
      const a = await replica('a', prefix, 10);
      const b = await replica('b', prefix, 10, { subscriber, reconcileIntervalMs: 300 });
      const tripped = Date.now();
      await fail(a.breakers[3]!);
      await eventually(
        'b adopting the missed open',
        () => (b.breakers[3]!.lastDecidedState === 'open' ? true : undefined),
        5_000,
      );
      expect(dropped).toBe(1);
      // One interval (300 ms) and the read; a loaded machine may add a little, a missed repair would add a day.
      expect(Date.now() - tripped).toBeLessThan(300 + 1_500);
    });

    it('reads everything once when Redis lost the log (FLUSHALL), and writes back the fleet force it lost', async () => {
      const [a, b] = [await replica('a', prefix, 300), await replica('b', prefix, 300)];
      await a.store.fleet.force(a.breakers[0]!, 'open', { reason: 'maintenance' });
      await eventually('b forced', () =>
        b.breakers[0]!.snapshot().forced === undefined ? undefined : true,
      );
      await b.store.reconcile({ changedOnly: true });
      await admin.flushall();
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      // Everything read once (the scripts that start a new count and write the force again run commands of their own).
      expect((await commands()).hgetall).toBe(3 * 300);
      await eventually('the force written again', async () =>
        (await admin.hget(`${prefix}{b0}:force`, 'reason')) === 'maintenance' ? true : undefined,
      );
      // Written again, marked again: a new count, which the other replica follows by reading everything once.
      expect(await admin.hget(changeKeys(prefix).version, 'version')).toBe('1');
      await resetStats();
      await a.store.reconcile({ changedOnly: true });
      expect((await commands()).hgetall).toBe(3 * 300);
      await resetStats();
      await a.store.reconcile({ changedOnly: true });
      expect(await commands()).toEqual({ hmget: 1 });
    });

    it('reads everything while the log is junk, and the next change starts a new count', async () => {
      const [a, b] = [await replica('a', prefix, 20), await replica('b', prefix, 20)];
      const { version, log } = changeKeys(prefix);
      await admin.del(version);
      await admin.set(version, 'junk');
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      // The head is junk: everything is read, and a new count starts (one script, and what it runs).
      expect(await commands()).toMatchObject({ hmget: 1, eval: 1, hgetall: 60 });
      expect(await admin.hget(version, 'version')).toBe('0');
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      expect(await commands()).toEqual({ hmget: 1 });
      await fail(a.breakers[2]!);
      await eventually('b adopting the open', () =>
        b.breakers[2]!.lastDecidedState === 'open' ? true : undefined,
      );
      expect([await admin.type(version), await admin.hget(version, 'version')]).toEqual([
        'hash',
        '1',
      ]);
      // A junk log is no key error of any breaker: nobody stopped sharing.
      expect(b.breakers.every((x) => x.snapshot().coordination?.shared === true)).toBe(true);
      expect(await admin.zrange(log, '0', '-1', 'WITHSCORES')).toEqual(['b2', '1']);
      await b.store.reconcile({ changedOnly: true });
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      expect(await commands()).toEqual({ hmget: 1 });
      expect(b.store.storeErrors).toBe(0);
    });

    it('reads everything once when a reconcile is asked for during a read of everything in several batches', async () => {
      const [, b] = [await replica('a', prefix, 10), await replica('b', prefix, 3 * READ_BATCH)];
      await resetStats();
      // Between two batches nothing is in flight: the second reconcile must still wait for the whole round, and then find nothing new.
      await Promise.all([b.store.reconcile(), b.store.reconcile({ changedOnly: true })]);
      await b.store.reconcile({ changedOnly: true });
      expect(await commands()).toEqual({ hmget: 3, hgetall: 3 * 3 * READ_BATCH });
    });

    it('never lets junk in the change log stop a breaker sharing, and a quiet reconcile is one command again after the next change (fast-check)', async () => {
      const text = fc.oneof(
        fc.constantFrom('', 'NaN', '-1', '1.5', '1e308', '9007199254740993', 'x'),
        fc.integer({ min: 0, max: 50 }).map(String),
      );
      const junk = fc.record({
        version: fc.oneof(
          fc.constant({ type: 'none' as const }),
          fc.record({ type: fc.constant('string' as const), value: text }),
          fc.record({ type: fc.constant('list' as const), value: text }),
          fc.record({
            type: fc.constant('hash' as const),
            fields: fc.record({ epoch: text, version: text, trimmed: text }, { requiredKeys: [] }),
          }),
        ),
        log: fc.oneof(
          fc.constant({ type: 'none' as const }),
          fc.record({ type: fc.constant('string' as const), value: text }),
          fc.record({
            type: fc.constant('zset' as const),
            members: fc.array(
              fc.tuple(
                fc.oneof(fc.constantFrom('b0', 'b1', 'gone'), fc.string()),
                fc.double({ min: -1e20, max: 1e20, noNaN: true }),
              ),
              { maxLength: 4 },
            ),
          }),
        ),
      });
      await fc.assert(
        fc.asyncProperty(junk, async ({ version, log }) => {
          prefix = `c${++prefixSeq}:`;
          const keys = changeKeys(prefix);
          const [a, b] = [await replica('a', prefix, 3), await replica('b', prefix, 3)];
          // What start-up wrote, replaced by junk (or by nothing).
          await admin.del(keys.version, keys.log);
          if (version.type === 'string') await admin.set(keys.version, version.value);
          if (version.type === 'list') await admin.rpush(keys.version, version.value);
          if (version.type === 'hash' && Object.keys(version.fields).length > 0)
            await admin.hset(keys.version, version.fields);
          if (log.type === 'string') await admin.set(keys.log, log.value);
          if (log.type === 'zset')
            for (const [member, score] of log.members) await admin.zadd(keys.log, score, member);
          await b.store.reconcile({ changedOnly: true });
          await fail(a.breakers[1]!);
          await eventually('b adopting the open', () =>
            b.breakers[1]!.lastDecidedState === 'open' ? true : undefined,
          );
          await b.store.reconcile({ changedOnly: true });
          await resetStats();
          await b.store.reconcile({ changedOnly: true });
          expect(await commands()).toEqual({ hmget: 1 });
          for (const r of [a, b]) {
            expect(r.store.storeErrors).toBe(0);
            expect(r.breakers.map((x) => x.snapshot().coordination?.shared)).toEqual([
              true,
              true,
              true,
            ]);
          }
          for (const { store, redis } of opened.splice(0)) {
            await store.close();
            redis.disconnect();
          }
        }),
        { seed: 19_001, numRuns: 40 },
      );
    });

    it('keeps one entry per breaker in the log, whatever its number of changes', async () => {
      const [a] = [await replica('a', prefix, 3)];
      for (let i = 0; i < 5; i++) {
        await a.store.fleet.force(a.breakers[1]!, 'open', { reason: `r${i}` });
        await a.store.fleet.release(a.breakers[1]!);
      }
      const { version, log } = changeKeys(prefix);
      expect(await admin.zrange(log, '0', '-1', 'WITHSCORES')).toEqual(['b1', '10']);
      expect(await admin.hget(version, 'version')).toBe('10');
      expect(CHANGE_LOG_MAX).toBeGreaterThanOrEqual(10_000);
    });

    it('hydrates 1,000 breakers in batches of READ_BATCH, never one round trip per breaker nor all at once', async () => {
      await replica('a', prefix, 1_000).then(({ breakers }) => fail(breakers[0]!));
      const redis = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 });
      let outstanding = 0;
      let most = 0;
      let sent = 0;
      const hgetall = redis.hgetall.bind(redis);
      vi.spyOn(redis, 'hgetall').mockImplementation(((key: string) => {
        sent++;
        most = Math.max(most, ++outstanding);
        return hgetall(key).finally(() => outstanding--);
      }) as typeof redis.hgetall);
      const b = await replica('b', prefix, 1_000, {}, redis);
      expect(b.breakers[0]!.lastDecidedState).toBe('open');
      expect([sent, most]).toEqual([3_000, 3 * READ_BATCH]);
    });

    it('marks changes apart on a Cluster whose prefix has no hash tag, and a replica reads them all the same', async () => {
      // A client that says it is a Cluster: scripts cannot reach the change log's slot, so the writer marks apart.
      const asCluster = (redis: Redis) =>
        new Proxy(redis, {
          get: (target, key, receiver) =>
            key === 'isCluster' ? true : (Reflect.get(target, key, receiver) as unknown),
        });
      const plain = () => new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 });
      const a = await replica('a', prefix, 50, {}, asCluster(plain()));
      const b = await replica('b', prefix, 50, {}, asCluster(plain()));
      await fail(a.breakers[4]!);
      await a.store.fleet.force(a.breakers[9]!, 'disabled', { reason: 'apart' });
      await eventually('both marked', async () =>
        (await admin.zcard(changeKeys(prefix).log)) === 2 ? true : undefined,
      );
      await resetStats();
      await b.store.reconcile({ changedOnly: true });
      expect(await commands()).toEqual({ hmget: 1, zrangebyscore: 1, hgetall: 6 });
      expect([b.breakers[4]!.lastDecidedState, b.breakers[9]!.snapshot().forced?.reason]).toEqual([
        'open',
        'apart',
      ]);
    });
  },
);
