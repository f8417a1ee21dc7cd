import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import { RedisBreakerStore } from '../../lib/redis/index.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually, nextTransition } from './helpers/wait.js';

// Records in Redis that no replica wrote (a hand edit, a restore, another program under the same prefix): none
// may reach a caller, each must be contained, and the fleet must heal once the record is gone. Several stores in
// one process stand for replicas.

const available = redisServerAvailable();
const OPTIONS: BreakerOptions = {
  consecutiveFailures: 1,
  openDurationMs: 300,
  halfOpen: { maxWaitMs: 400 },
  // These scenarios open the fleet by two reports, or not at all: the default 'auto' would let one
  // replica's own opening open a fleet of two, as soon as both had reported.
  share: { quorum: 2 },
};
const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);
const succeed = (b: Breaker) => b.execute(() => Promise.resolve('ok')).catch((e: unknown) => e);

let server: RedisServer;
let admin: Redis;
let prefixSeq = 0;
const opened: { store: RedisBreakerStore; redis: Redis }[] = [];

interface Replica {
  store: RedisBreakerStore;
  breaker: Breaker;
  warnings: string[];
}

async function replica(
  instanceId: string,
  prefix: string,
  storeOptions: { reconcileIntervalMs?: number } = {},
): Promise<Replica> {
  const redis = new Redis(server.port, '127.0.0.1', {
    retryStrategy: () => 50,
    maxRetriesPerRequest: 1,
  });
  redis.on('error', () => undefined);
  const warnings: string[] = [];
  const store = new RedisBreakerStore({
    redis,
    keyPrefix: prefix,
    instanceId,
    logger: { warn: (m) => warnings.push(m), log: () => undefined },
    ...storeOptions,
  });
  opened.push({ store, redis });
  const breaker = new Breaker('payments', OPTIONS, { coordinator: store.coordinator });
  await store.hydrate([breaker]);
  return { store, breaker, warnings };
}

/** Opens the fleet's breaker by a quorum of two reports, and waits until every replica has adopted it. */
async function openFleet(prefix: string, replicas: Replica[]): Promise<void> {
  const adopted = replicas
    .slice(2)
    .map((r) => nextTransition(r.breaker, (change) => change.to === 'open'));
  await fail(replicas[0]!.breaker);
  await fail(replicas[1]!.breaker);
  await Promise.all(adopted);
  await eventually('the fleet open', async () =>
    (await admin.hget(`${prefix}{payments}:state`, 'state')) === 'open' ? true : undefined,
  );
}

/** Waits past the fleet's open period: each replica asks for the permit, loses it to the ghost, and rejects calls. */
async function refusedByGhost(replicas: Replica[]): Promise<void> {
  const until = Math.max(...replicas.map((r) => r.breaker.snapshot().openUntil ?? 0));
  await eventually('the open period over', () => (Date.now() > until + 50 ? true : undefined));
  for (const r of replicas) await succeed(r.breaker);
  await eventually('every replica told it lost the permit', async () => {
    const outcomes = await Promise.all(replicas.map((r) => succeed(r.breaker)));
    return outcomes.every((o) => o instanceof Error && (o as { reason?: string }).reason === 'open')
      ? true
      : undefined;
  });
  expect(replicas.map((r) => r.breaker.state)).toEqual(replicas.map(() => 'open'));
}

describe.skipIf(!available)('records no replica wrote, on a real Redis', () => {
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
    prefix = `j${++prefixSeq}:`;
  });

  afterEach(async () => {
    for (const { store, redis } of opened.splice(0)) {
      await store.close();
      redis.disconnect();
    }
  });

  it('a probe permit with an hour to run holds no replica longer than halfOpen.maxWaitMs: deleted, the fleet probes and closes', async () => {
    const fleet = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    await openFleet(prefix, fleet);
    await admin.set(`${prefix}{payments}:probe`, 'ghost', 'PX', 3_600_000);
    // Every replica asks for the permit at the end of the open period, and loses it to the ghost.
    await refusedByGhost(fleet);
    await admin.del(`${prefix}{payments}:probe`);
    const deletedAt = Date.now();
    // Within halfOpen.maxWaitMs (400 ms) each replica asks again, one wins, probes, and its verdict closes the fleet.
    await eventually(
      'a probe admitted after the ghost permit was deleted',
      async () => ((await succeed(fleet[0]!.breaker)) === 'ok' ? true : undefined),
      2_000,
    );
    await eventually('every replica closed', () =>
      fleet.every((r) => r.breaker.state === 'closed') ? true : undefined,
    );
    expect(Date.now() - deletedAt).toBeLessThan(2_000);
    expect(fleet.flatMap((r) => r.warnings)).toEqual([]);
  });

  it('a probe permit with an hour to run that nobody deletes is cut to one half-open period: the fleet probes and closes', async () => {
    const fleet = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    await openFleet(prefix, fleet);
    const key = `${prefix}{payments}:probe`;
    await admin.set(key, 'ghost', 'PX', 3_600_000);
    await refusedByGhost(fleet);
    // The first replica refused cut it to its whole half-open period (halfOpen.maxWaitMs 400 x 1 round).
    expect(await admin.pttl(key)).toBeLessThanOrEqual(400);
    const cutAt = Date.now();
    await eventually(
      'a probe admitted once the ghost permit lapsed',
      async () => ((await succeed(fleet[0]!.breaker)) === 'ok' ? true : undefined),
      2_000,
    );
    await eventually('every replica closed', () =>
      fleet.every((r) => r.breaker.state === 'closed') ? true : undefined,
    );
    expect(Date.now() - cutAt).toBeLessThan(2_000);
    expect(fleet.flatMap((r) => r.warnings)).toEqual([]);
  });

  it('a probe permit expiring past 2^31 - 1 ms arms no timer that fires at once: no TimeoutOverflowWarning', async () => {
    const overflows: string[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'TimeoutOverflowWarning') overflows.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      const fleet = [await replica('a', prefix), await replica('b', prefix)];
      await openFleet(prefix, fleet);
      await admin.set(`${prefix}{payments}:probe`, 'ghost', 'PX', 3_000_000_000);
      await refusedByGhost(fleet);
      // A wake timer armed with 3e9 ms fires after 1 ms, finds the permit still lost, and arms again: once per millisecond.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(overflows).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a forged open signal for a breaker with no state hash is undone on every replica within one reconcile interval', async () => {
    const fleet = [
      await replica('a', prefix, { reconcileIntervalMs: 200 }),
      await replica('b', prefix, { reconcileIntervalMs: 200 }),
      await replica('c', prefix, { reconcileIntervalMs: 200 }),
    ];
    // A generation of now, and one ten minutes ahead (past the minute a replica trusts): both are undone.
    for (const lead of [0, 600_000]) {
      const now = Date.now();
      const adopted = fleet.map((r) =>
        nextTransition(r.breaker, (change) => change.reason === 'shared-open'),
      );
      const forged = {
        v: 1,
        b: 'payments',
        s: 'open',
        u: now + 600_000,
        g: now + lead,
        o: 'forger',
        a: now,
      };
      await admin.publish(`${prefix}signals`, JSON.stringify(forged));
      await Promise.all(adopted);
      expect(await admin.exists(`${prefix}{payments}:state`)).toBe(0);
      const heardAt = Date.now();
      // Without the fix every replica stayed open for maxRetryAfterMs (300 s), the longest open period it accepts.
      await Promise.all(
        fleet.map((r) =>
          nextTransition(r.breaker, (change) => change.reason === 'shared-close', 1_000),
        ),
      );
      expect(Date.now() - heardAt).toBeLessThan(1_000);
      expect(fleet.map((r) => r.breaker.state)).toEqual(['closed', 'closed', 'closed']);
    }
    // The forged generation holds nothing back: a real quorum opens the fleet, and the third replica adopts it.
    const adopted = nextTransition(fleet[2]!.breaker, (change) => change.reason === 'shared-open');
    await fail(fleet[0]!.breaker);
    await fail(fleet[1]!.breaker);
    await adopted;
    expect(fleet.flatMap((r) => r.warnings)).toEqual([]);
  });

  it("an open of a replica's own evidence stays when a forged signal it also heard is undone", async () => {
    const [a, b] = [
      await replica('a', prefix, { reconcileIntervalMs: 200 }),
      await replica('b', prefix, { reconcileIntervalMs: 200 }),
    ];
    await fail(a.breaker);
    const own = a.breaker.snapshot().openUntil!;
    const adopted = nextTransition(b.breaker, (change) => change.reason === 'shared-open');
    const now = Date.now();
    const forged = {
      v: 1,
      b: 'payments',
      s: 'open',
      u: now + 600_000,
      g: now,
      o: 'forger',
      a: now,
    };
    await admin.publish(`${prefix}signals`, JSON.stringify(forged));
    await adopted;
    // a heard it too: its open period was extended to the forged one (cut to maxRetryAfterMs, 300 s).
    await eventually('a extended to the forged open-until', () =>
      a.breaker.snapshot().openUntil! > now + 299_000 ? true : undefined,
    );
    await nextTransition(b.breaker, (change) => change.reason === 'shared-close', 1_000);
    // a opened by itself: its own open period is not the forger's to end, nor the forger's to lengthen.
    // Without the fix it kept the forged open-until, 300 s ahead. Each replica finds the forgery on its own
    // reconcile, so a may take one more interval than b.
    await eventually('a back to its own open-until', () =>
      a.breaker.snapshot().openUntil === own ? true : undefined,
    );
    const snapshot = a.breaker.snapshot();
    expect(snapshot).toMatchObject({ state: 'open', openUntil: own });
    // Its own 300 ms, or once they are over, the 400 ms of halfOpen.maxWaitMs until the fleet's probe is decided.
    expect(snapshot.retryAfterMs).toBeLessThanOrEqual(400);
  });

  it('the replica registry: a key of the wrong type is repaired, and fleetView() never rejects with WRONGTYPE', async () => {
    const fleet = [
      await replica('a', prefix, { reconcileIntervalMs: 100 }),
      await replica('b', prefix, { reconcileIntervalMs: 100 }),
    ];
    const seen = `${prefix}{~replicas}:seen`;
    const reports = `${prefix}{~replicas}:reports`;
    const listed = async () => {
      const view = await fleet[0]!.store.fleetView();
      return view.replicas.map((r) => [r.instanceId, r.breakers]);
    };
    await eventually('both replicas listed', async () =>
      (await listed()).length === 2 ? true : undefined,
    );
    for (const [key, junk] of [
      [seen, () => admin.set(seen, 'junk')],
      [reports, () => admin.set(reports, 'junk')],
      [seen, () => admin.rpush(seen, 'junk')],
      [reports, () => admin.sadd(reports, 'junk')],
    ] as const) {
      await admin.del(key);
      await junk();
      // Without the repair: "WRONGTYPE Operation against a key holding the wrong kind of value", until deleted by hand.
      await expect(fleet[0]!.store.fleetView()).resolves.toMatchObject({ breakers: {} });
      // Within one report of each (every reconcile interval), both are listed again with what they report.
      await eventually(`both replicas listed again after junk in ${key}`, async () =>
        JSON.stringify(await listed()) === '[["a",1],["b",1]]' ? true : undefined,
      );
      expect(await listed()).toEqual([
        ['a', 1],
        ['b', 1],
      ]);
      expect([await admin.type(seen), await admin.type(reports)]).toEqual(['zset', 'hash']);
    }
  });

  it('the replica registry: a listing scored +inf (or past any TTL) is dropped, and its breakers never count as open', async () => {
    const a = await replica('a', prefix, { reconcileIntervalMs: 100 });
    const seen = `${prefix}{~replicas}:seen`;
    const reports = `${prefix}{~replicas}:reports`;
    await eventually('a listed', async () =>
      (await a.store.fleetView()).replicas.length === 1 ? true : undefined,
    );
    const report = `${Date.now()} ${JSON.stringify({ s: true, b: 1, n: { payments: 'open' } })}`;
    await admin.zadd(seen, '+inf', 'ghost', Date.now() + 1e12, 'far');
    await admin.hset(reports, 'ghost', report, 'far', report);
    const view = await a.store.fleetView();
    expect(view.replicas.map((r) => r.instanceId)).toEqual(['a']);
    expect(view.breakers).toEqual({});
    expect(await admin.zscore(seen, 'ghost')).toBeNull();
    expect(await admin.zscore(seen, 'far')).toBeNull();
    expect(await admin.hexists(reports, 'ghost')).toBe(0);
  });

  /** As the module does: a patch over the breaker's own options, patches merged into the fleet's. */
  const merging = (r: Replica) =>
    r.store.fleet.useReconfigurer({
      apply: (breaker, patch) => breaker.reconfigure({ ...OPTIONS, ...patch }),
      merge: (previous, patch) => ({ ...previous, ...patch }),
    });

  it('a fleet reconfiguration every replica refuses is never merged into a later one, nor written back once deleted', async () => {
    const fleet = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    fleet.forEach(merging);
    const key = `${prefix}{payments}:config`;
    const now = Date.now();
    await admin.hset(
      key,
      'patch',
      '{"openDurationMs":-5}',
      'generation',
      now,
      'origin',
      'ghost',
      'at',
      now,
    );
    await Promise.all(fleet.map((r) => r.store.reconcile()));
    expect(fleet.map((r) => r.warnings.length)).toEqual([1, 1, 1]);
    expect(fleet.map((r) => r.breaker.config.openDurationMs)).toEqual([300, 300, 300]);
    // Deleted: no replica writes it back (without the fix, every replica that had read it did).
    await admin.del(key);
    await Promise.all(fleet.map((r) => r.store.reconcile()));
    await Promise.all(fleet.map((r) => r.store.reconcile()));
    expect(await admin.exists(key)).toBe(0);
    await admin.hset(
      key,
      'patch',
      '{"openDurationMs":-5}',
      'generation',
      now,
      'origin',
      'ghost',
      'at',
      now,
    );
    await Promise.all(fleet.map((r) => r.store.reconcile()));

    // Without the fix the refused patch was merged in ({"openDurationMs":-5,"timeoutMs":2000}): b and c refused it too.
    const result = await fleet[0]!.store.fleet.reconfigure(fleet[0]!.breaker, { timeoutMs: 2_000 });
    expect(JSON.parse((await admin.hget(key, 'patch'))!)).toEqual({ timeoutMs: 2_000 });
    expect(result.fleet.generation).toBeGreaterThan(now);
    await eventually('every replica reconfigured', () =>
      fleet.every((r) => r.breaker.config.timeoutMs === 2_000) ? true : undefined,
    );
    expect(fleet.map((r) => r.warnings.length)).toEqual([1, 1, 1]);

    // A refused record Redis loses is not written back by the replicas that refused it.
    await admin.hset(key, 'patch', '{"openDurationMs":-5}', 'generation', Date.now() + 1_000);
    await Promise.all(fleet.map((r) => r.store.reconcile()));
    expect(fleet.map((r) => r.warnings.length)).toEqual([2, 2, 2]);
    await admin.del(key);
    await Promise.all(fleet.map((r) => r.store.reconcile()));
    await Promise.all(fleet.map((r) => r.store.reconcile()));
    const patch = await admin.hget(key, 'patch');
    // What they apply, the fleet's patch before the junk, is what they write again.
    expect(patch === null ? null : JSON.parse(patch)).toEqual({ timeoutMs: 2_000 });
  });

  it('a fleet reconfiguration whose merged patch is invalid rejects for its caller, naming the breaker and the option, and writes nothing', async () => {
    const fleet = [await replica('a', prefix), await replica('b', prefix)];
    fleet.forEach(merging);
    await fleet[0]!.store.fleet.reconfigure(fleet[0]!.breaker, { minimumThroughput: 20 });
    await eventually('b reconfigured', () =>
      fleet[1]!.breaker.config.minimumThroughput === 20 ? true : undefined,
    );
    const stored = await admin.hgetall(`${prefix}{payments}:config`);
    // Valid alone, not with the fleet's patch: a count window of 10 is below its minimumThroughput of 20.
    const order = fleet[0]!.store.fleet.reconfigure(fleet[0]!.breaker, {
      window: { type: 'count', size: 10 },
    });
    await expect(order).rejects.toThrow(/^Circuit breaker "payments".*minimumThroughput/s);
    expect(await admin.hgetall(`${prefix}{payments}:config`)).toEqual(stored);
    expect(fleet.map((r) => r.breaker.config.minimumThroughput)).toEqual([20, 20]);
    expect(fleet.flatMap((r) => r.warnings)).toEqual([]);
  });
});
