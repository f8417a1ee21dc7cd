import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import { RedisBreakerStore, type RedisBreakerStoreOptions } from '../../lib/redis/index.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';
import { commandStats } from './helpers/command-stats.js';

// The fleet's registry of replicas on a real redis-server: every replica
// reports itself at each reconcile, one that stops is gone after a few
// intervals, and a quiet interval costs the same whatever the number of breakers.

const available = redisServerAvailable();
const OPTIONS: BreakerOptions = {
  consecutiveFailures: 1,
  openDurationMs: 60_000,
  share: { quorum: 2 },
};

let server: RedisServer;
let admin: Redis;
let prefixSeq = 0;
const opened: { store: RedisBreakerStore; redis: Redis }[] = [];

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
): Promise<Replica> {
  const redis = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 });
  redis.on('error', () => undefined);
  const store = new RedisBreakerStore({
    redis,
    keyPrefix: prefix,
    instanceId,
    logger: false,
    ...storeOptions,
  });
  opened.push({ store, redis });
  const breakers = Array.from(
    { length: count },
    (_, i) => new Breaker(`b${i}`, OPTIONS, { coordinator: store.coordinator }),
  );
  await store.hydrate(breakers);
  return { store, breakers, redis };
}

const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);

const commands = () => commandStats(admin);

/** What the store does at each reconcile interval, driven by the test rather than by its timer. */
function quietInterval(store: RedisBreakerStore): Promise<unknown> {
  const registry = (store as unknown as { replicas: { report(): Promise<void> } }).replicas;
  return Promise.all([store.reconcile({ changedOnly: true }), registry.report()]);
}

describe.skipIf(!available)('RedisBreakerStore.fleetView(): the replicas that report', () => {
  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.port, '127.0.0.1');
  });
  afterAll(async () => {
    await admin?.quit();
    await server?.kill();
  });
  afterEach(async () => {
    for (const { store, redis } of opened.splice(0)) {
      await store.close();
      redis.disconnect();
    }
  });

  it('lists every replica with its breakers not closed, counts them per breaker, and forgets one that stops', async () => {
    const prefix = `fv${++prefixSeq}:`;
    // 100 ms intervals: a replica is listed 300 ms after its last report.
    const fast = { reconcileIntervalMs: 100 };
    const [a, b, c] = [
      await replica('a', prefix, 3, fast),
      await replica('b', prefix, 3, fast),
      await replica('c', prefix, 3, fast),
    ];
    // b0 fails on a and b: the quorum of 2 opens it fleet-wide, c adopts it. b1 fails on a alone.
    await fail(a.breakers[0]!);
    await fail(b.breakers[0]!);
    await fail(a.breakers[1]!);
    await eventually('c adopting b0', () =>
      c.breakers[0]!.lastDecidedState === 'open' ? true : undefined,
    );
    const openUntil = Number(await admin.hget(`${prefix}{b0}:state`, 'openUntil'));
    const view = await eventually('three reports with every state', async () => {
      const v = await c.store.fleetView();
      return v.replicas.length === 3 &&
        v.replicas.every((r) => r.notClosed.b0 === 'open') &&
        v.replicas[0]!.notClosed.b1 === 'open'
        ? v
        : undefined;
    });
    expect(view.replicas.map(({ ageMs: _age, lastSeenAt: _seen, ...rest }) => rest)).toEqual([
      { instanceId: 'a', shared: true, breakers: 3, notClosed: { b0: 'open', b1: 'open' } },
      { instanceId: 'b', shared: true, breakers: 3, notClosed: { b0: 'open' } },
      { instanceId: 'c', shared: true, breakers: 3, notClosed: { b0: 'open' } },
    ]);
    for (const r of view.replicas) {
      expect(r.ageMs).toBeGreaterThanOrEqual(0);
      expect(r.ageMs).toBeLessThanOrEqual(300);
      expect(r.lastSeenAt).toBe(view.at - r.ageMs);
    }
    const b1Shared = (await admin.hget(`${prefix}{b1}:state`, 'state')) ?? 'none';
    expect({ ...view.breakers }).toEqual({
      b0: {
        shared: { state: 'open', openUntil },
        replicasOpen: 3,
        replicasHalfOpen: 0,
        replicasNotClosed: 3,
      },
      b1: {
        shared: b1Shared === 'none' ? { state: 'none' } : { state: b1Shared },
        replicasOpen: 1,
        replicasHalfOpen: 0,
        replicasNotClosed: 1,
      },
    });
    expect(b1Shared).toBe('none');

    // c's Redis connection goes (a crash, a partition): it stops reporting, and is gone within its TTL.
    c.redis.disconnect();
    const after = await eventually(
      'c gone',
      async () => {
        const v = await a.store.fleetView();
        return v.replicas.length === 2 ? v : undefined;
      },
      2_000,
    );
    expect(after.replicas.map((r) => r.instanceId)).toEqual(['a', 'b']);
    expect(after.breakers.b0!.replicasOpen).toBe(2);
    // b closes: it leaves the list at once.
    await b.store.close();
    expect((await a.store.fleetView()).replicas.map((r) => r.instanceId)).toEqual(['a']);
  });

  it('keeps a replica that reconciles less often listed for its own three intervals', async () => {
    const prefix = `fv${++prefixSeq}:`;
    const slow = await replica('slow', prefix, 1, { reconcileIntervalMs: 600_000 });
    const fast = await replica('fast', prefix, 1, { reconcileIntervalMs: 50 });
    // The fast one trims the list at every report, 20 times a second: the slow one is listed all the same.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const view = await fast.store.fleetView();
    expect(view.replicas.map((r) => r.instanceId)).toEqual(['fast', 'slow']);
    expect(view.replicas[1]!.ageMs).toBeGreaterThanOrEqual(400);
    await slow.store.close();
    expect((await fast.store.fleetView()).replicas.map((r) => r.instanceId)).toEqual(['fast']);
  });

  it('costs each replica the same commands per quiet interval with 10 breakers as with 1,000', async () => {
    const perInterval: Record<number, Record<string, number>> = {};
    for (const m of [10, 1_000]) {
      const prefix = `fv${++prefixSeq}:`;
      // The timer never fires by itself here: the test drives the intervals it counts.
      const quiet = { reconcileIntervalMs: 600_000 };
      const fleet = [await replica('a', prefix, m, quiet), await replica('b', prefix, m, quiet)];
      // A few breakers not closed: a report lists them, however many are closed.
      await fail(fleet[0]!.breakers[m - 1]!);
      await fail(fleet[1]!.breakers[m - 1]!);
      await eventually('both reports of the open', async () =>
        (await admin.zcard(`${prefix}{b${m - 1}}:opens`)) === 2 ? true : undefined,
      );
      await Promise.all(fleet.map((r) => quietInterval(r.store)));
      await admin.config('RESETSTAT');
      for (let round = 0; round < 5; round++)
        await Promise.all(fleet.map((r) => quietInterval(r.store)));
      const calls = await commands();
      perInterval[m] = Object.fromEntries(
        Object.entries(calls).map(([name, n]) => [name, n / fleet.length / 5]),
      );
      const view = await fleet[0]!.store.fleetView();
      expect(view.replicas.map((r) => [r.instanceId, r.breakers, r.notClosed])).toEqual([
        ['a', m, { [`b${m - 1}`]: 'open' }],
        ['b', m, { [`b${m - 1}`]: 'open' }],
      ]);
      for (const { store } of opened.splice(0)) await store.close();
    }
    expect(perInterval[10]).toEqual(perInterval[1_000]);
    expect(perInterval[10]).toEqual({
      hmget: 1,
      eval: 1,
      time: 1,
      zrangebyscore: 1,
      zadd: 1,
      hset: 1,
      pexpire: 2,
      // How many replicas report: what the quorum 'auto' counts.
      zcard: 1,
    });
  });
});
