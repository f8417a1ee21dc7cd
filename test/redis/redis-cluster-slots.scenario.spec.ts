import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import { FleetOrderError, RedisBreakerStore } from '../../lib/redis/index.js';
import { keepingAllButQuorum } from './helpers/log-lines.js';
import { RedisCluster, redisClusterAvailable } from './helpers/redis-cluster.js';
import { eventually } from './helpers/wait.js';
import { REPLICA_TTL_INTERVALS } from '../../lib/redis/redis-breaker.fleet-view.js';

// A Redis Cluster with `cluster-require-full-coverage no`: one master killed, the others serve their slots. Only the
// breakers whose slot is on the dead master decide locally; the others share throughout, also when the dead master
// holds the change log (`{~changes}`), which each store then reads past until it is back, and when a fleet order on a
// dead master's breaker fails.

const available = redisClusterAvailable();
const OPTIONS: BreakerOptions = { consecutiveFailures: 1, openDurationMs: 600 };
const INTERVAL_MS = 300;
const BREAKERS = Array.from({ length: 12 }, (_, i) => `svc-${i}`);
const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);

let cluster: RedisCluster;

describe.skipIf(!available)('RedisBreakerStore on a Cluster under partial coverage', () => {
  beforeAll(async () => {
    cluster = await RedisCluster.start(3, { fullCoverage: false });
  }, 40_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it(
    'keeps sharing the breakers of the live masters while one is down, and brings the others back when it answers',
    () => killOne('p:', 'neither'),
    60_000,
  );

  it(
    'keeps sharing them while the dead master holds the change log, which the breakers do not need',
    () => killOne('q:', 'log'),
    60_000,
  );

  it(
    'keeps every replica in the fleet view while a master down holds some breakers but not the registry',
    () => reportsWithOneDown('r:'),
    60_000,
  );

  it(
    'hydrates the breakers of the live masters when a master is already down at start-up, and marks the others local',
    () => startWithOneDown('h:', 'neither'),
    60_000,
  );

  it(
    'hydrates them too when the master already down holds the change log',
    () => startWithOneDown('i:', 'log'),
    60_000,
  );
});

/** The master to kill: one holding `neither` the change log nor the registry of `prefix`, or the change log's (`log`). */
async function victimFor(
  prefix: string,
  holding: 'neither' | 'log',
): Promise<{ victim: number; dead: string[]; live: string[] }> {
  const admin = cluster.node(cluster.nodes[0]!.port);
  try {
    const portOf = async (key: string) =>
      cluster.owner(Number(await admin.cluster('KEYSLOT', key))).port;
    const owner = new Map<string, number>();
    for (const name of BREAKERS) owner.set(name, await portOf(`${prefix}{${name}}:state`));
    const log = await portOf(`${prefix}{~changes}:log`);
    const kept = [log, await portOf(`${prefix}{~replicas}:seen`)];
    const victim =
      holding === 'log' ? log : cluster.nodes.map((n) => n.port).find((p) => !kept.includes(p))!;
    const dead = BREAKERS.filter((name) => owner.get(name) === victim);
    const live = BREAKERS.filter((name) => owner.get(name) !== victim);
    expect([dead.length > 0, live.length > 0]).toEqual([true, true]);
    return { victim, dead, live };
  } finally {
    admin.disconnect();
  }
}

/**
 * Kills a master that holds some breakers but not the registry of replicas:
 * the stores are no longer `shared` (a slot is down), and each replica goes on
 * reporting to the registry, whose slot answers, so the fleet view keeps
 * listing it (as not sharing) past the time its listing from before would have
 * expired. Before, a replica skipped its reports while any slot was down, and
 * dropped out of the view and of the quorum 'auto' count. A breaker of the dead
 * master that opens is listed with its fleet state `unavailable` (the view
 * rejected before).
 */
async function reportsWithOneDown(prefix: string): Promise<void> {
  const { victim, dead } = await victimFor(prefix, 'neither');
  const opened: { store: RedisBreakerStore; redis: Cluster }[] = [];
  const stores = ['a', 'b'].map((instanceId) => {
    const redis = cluster.client();
    const store = new RedisBreakerStore({
      redis,
      keyPrefix: prefix,
      instanceId,
      reconcileIntervalMs: INTERVAL_MS,
      operationTimeoutMs: 300,
      logger: false,
    });
    opened.push({ store, redis });
    const breakers = BREAKERS.map(
      (n) => new Breaker(n, OPTIONS, { coordinator: store.coordinator }),
    );
    return { store, breakers };
  });
  try {
    for (const s of stores) await s.store.hydrate(s.breakers);
    await cluster.kill(victim);
    // A read of every breaker in each store: those of the dead master fail, their slot is down, the store not shared.
    await Promise.all(stores.map((s) => s.store.reconcile()));
    await eventually(
      'a slot down in both stores',
      () => (stores.every((s) => !s.store.shared) ? true : undefined),
      10_000,
    );
    for (const s of stores)
      expect(
        dead.map((n) => s.breakers[BREAKERS.indexOf(n)]!.snapshot().coordination?.shared),
      ).toEqual(dead.map(() => false));
    const downAt = (await stores[0]!.store.fleetView()).at;
    // Every listing from before the slot went down has expired once a report is this late (Redis' clock).
    const expiredBy = downAt + REPLICA_TTL_INTERVALS * INTERVAL_MS;
    const view = await eventually(
      'both replicas reporting past the expiry of their listings from before',
      async () => {
        const v = await stores[1]!.store.fleetView();
        return v.replicas.every((r) => r.lastSeenAt > expiredBy) ? v : undefined;
      },
      10_000,
    );
    expect(
      view.replicas.map((r) => ({ id: r.instanceId, shared: r.shared, breakers: r.breakers })),
    ).toEqual([
      { id: 'a', shared: false, breakers: BREAKERS.length },
      { id: 'b', shared: false, breakers: BREAKERS.length },
    ]);
    // A breaker of the dead master opens on a: the view still answers, its fleet state unavailable (it rejected).
    const lone = dead[0]!;
    await fail(stores[0]!.breakers[BREAKERS.indexOf(lone)]!);
    const listed = await eventually(
      `${lone} reported open`,
      async () => (await stores[1]!.store.fleetView()).breakers[lone],
      10_000,
    );
    expect(listed).toEqual({
      shared: { state: 'unavailable' },
      replicasOpen: 1,
      replicasHalfOpen: 0,
      replicasNotClosed: 1,
    });
  } finally {
    for (const { store, redis } of opened) {
      await store.close();
      redis.disconnect();
    }
    await cluster.restart(victim);
  }
}

/**
 * Opens every breaker fleet-wide, kills a master, then starts a store: its
 * hydration adopts the fleet's state of every breaker the live masters hold,
 * and marks local (`shared: false`) those of the dead one, instead of giving
 * up on all of them. Once the master is back, every breaker shares again.
 */
async function startWithOneDown(prefix: string, holding: 'neither' | 'log'): Promise<void> {
  const { victim, dead, live } = await victimFor(prefix, holding);
  const opened: { store: RedisBreakerStore; redis: Cluster }[] = [];
  const started = (instanceId: string) => {
    const redis = cluster.client();
    const lines: string[] = [];
    const store = new RedisBreakerStore({
      redis,
      keyPrefix: prefix,
      instanceId,
      reconcileIntervalMs: 300,
      operationTimeoutMs: 500,
      hydrateTimeoutMs: 5_000,
      logger: { warn: (m) => lines.push(`warn: ${m}`), log: keepingAllButQuorum(lines) },
    });
    opened.push({ store, redis });
    const breakers = new Map(
      BREAKERS.map((n) => [
        n,
        new Breaker(n, { ...OPTIONS, openDurationMs: 600_000 }, { coordinator: store.coordinator }),
      ]),
    );
    return { store, breakers, lines };
  };
  try {
    // The fleet's state before the kill: every breaker open (one replica alone: the quorum 'auto' is 1).
    const first = started('first');
    await first.store.hydrate([...first.breakers.values()]);
    for (const b of first.breakers.values()) await fail(b);
    await eventually('every breaker open fleet-wide', async () => {
      const view = await first.store.fleetView();
      return BREAKERS.every((n) => view.breakers[n]?.shared.state === 'open') ? true : undefined;
    });

    await cluster.kill(victim);
    const late = started('late');
    await late.store.hydrate([...late.breakers.values()]);
    const seen = (name: string) => {
      const snapshot = late.breakers.get(name)!.snapshot();
      return { name, state: snapshot.state, shared: snapshot.coordination?.shared };
    };
    expect(live.map(seen)).toEqual(live.map((name) => ({ name, state: 'open', shared: true })));
    expect(dead.map(seen)).toEqual(dead.map((name) => ({ name, state: 'closed', shared: false })));
    expect(late.store.shared).toBe(false);

    await cluster.restart(victim);
    await eventually(
      'every breaker sharing again',
      () =>
        late.store.shared && BREAKERS.every((n) => seen(n).shared === true) ? true : undefined,
      20_000,
    );
    // One warning for the outage, and one line when it ended (at the next read of every breaker).
    await eventually('the end of the outage', () => (late.lines.length > 1 ? true : undefined));
    expect(late.lines.map((line) => line.replace(/\(.*\)|\d+ ms/g, '…'))).toEqual([
      'warn: Redis is unreachable …: every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back.',
      'Redis is reachable again after …: circuit breakers share their state again.',
    ]);
  } finally {
    for (const { store, redis } of opened) {
      await store.close();
      redis.disconnect();
    }
    await cluster.restart(victim);
  }
}

/** Kills a master holding `neither` the change log nor the registry, or the one holding the change log (`log`). */
async function killOne(prefix: string, holding: 'neither' | 'log'): Promise<void> {
  {
    const admin = cluster.node(cluster.nodes[0]!.port);
    const portOf = async (key: string) =>
      cluster.owner(Number(await admin.cluster('KEYSLOT', key))).port;
    const owner = new Map<string, number>();
    for (const name of BREAKERS) owner.set(name, await portOf(`${prefix}{${name}}:state`));
    const log = await portOf(`${prefix}{~changes}:log`);
    const kept = [log, await portOf(`${prefix}{~replicas}:seen`)];
    admin.disconnect();
    const victim =
      holding === 'log' ? log : cluster.nodes.map((n) => n.port).find((p) => !kept.includes(p))!;
    const dead = BREAKERS.filter((name) => owner.get(name) === victim);
    const live = BREAKERS.filter((name) => owner.get(name) !== victim);
    expect([dead.length > 0, live.length > 0]).toEqual([true, true]);

    const opened: { store: RedisBreakerStore; redis: Cluster }[] = [];
    const stores = ['a', 'b'].map((instanceId) => {
      const redis = cluster.client();
      const lines: string[] = [];
      const store = new RedisBreakerStore({
        redis,
        keyPrefix: prefix,
        instanceId,
        reconcileIntervalMs: 300,
        operationTimeoutMs: 300,
        logger: { warn: (m) => lines.push(`warn: ${m}`), log: keepingAllButQuorum(lines) },
      });
      opened.push({ store, redis });
      const breakers = new Map(
        BREAKERS.map((n) => [n, new Breaker(n, OPTIONS, { coordinator: store.coordinator })]),
      );
      return { store, breakers, lines };
    });
    try {
      for (const s of stores) await s.store.hydrate([...s.breakers.values()]);
      const sharedOf = (s: (typeof stores)[number], name: string) =>
        s.breakers.get(name)!.snapshot().coordination?.shared;
      expect(stores.map((s) => BREAKERS.map((n) => sharedOf(s, n)))).toEqual(
        stores.map(() => BREAKERS.map(() => true)),
      );

      // Every 20 ms from the kill until the node is back: `shared` of each breaker of each store, as it changes.
      const series = new Map<string, boolean[]>();
      const sample = () => {
        for (const [i, s] of stores.entries())
          for (const name of BREAKERS) {
            const seen = series.get(`${i}:${name}`) ?? [];
            const now = sharedOf(s, name) === true;
            if (seen.at(-1) !== now) seen.push(now);
            series.set(`${i}:${name}`, seen);
          }
      };
      sample();
      const sampling = setInterval(sample, 20);
      await cluster.kill(victim);
      // A failure on every breaker: the writes of the dead master's slots fail, the others' succeed.
      for (const s of stores) for (const b of s.breakers.values()) await fail(b);
      await eventually(
        'the dead master’s breakers local in both stores',
        () => (stores.every((s) => dead.every((n) => sharedOf(s, n) === false)) ? true : undefined),
        10_000,
      );
      if (holding === 'neither') {
        // A fleet order on a dead master's breaker fails: its slot is down, not the store. Before, every breaker of
        // the store went local until a read of every breaker succeeded, so until the node was back.
        const [s] = stores;
        const order = s!.store.fleet.force(s!.breakers.get(dead[0]!)!, 'open', { reason: 'drill' });
        await expect(order).rejects.toBeInstanceOf(FleetOrderError);
        expect(live.map((n) => sharedOf(s!, n))).toEqual(live.map(() => true));
        // Its slot is known down now: each order on it is refused at once, saying so, without a command sent to wait
        // out operationTimeoutMs for.
        const client = opened[0]!.redis;
        const sent = vi.spyOn(client, 'eval');
        const target = s!.breakers.get(dead[0]!)!;
        const orders = await Promise.all(
          [
            s!.store.fleet.force(target, 'open', { reason: 'drill' }),
            s!.store.fleet.release(target),
            s!.store.fleet.reconfigure(target, { openDurationMs: 700 }),
          ].map((p) =>
            p.then(
              () => 'resolved',
              (error: unknown) => error,
            ),
          ),
        );
        expect(orders.map((error) => (error as FleetOrderError).message)).toEqual(
          ['forced open', 'released', 'reconfigured'].map(
            (what) =>
              `Circuit breaker "${dead[0]}" is ${what} on this replica only: the other replicas were not told, because the Redis Cluster node that holds this breaker's keys does not answer (its slot is down; the store tries it again at every reconcile). ` +
              'Give the order again once Redis is reachable (the store logs "Redis is reachable again"); replicas that miss an order are not told later.',
          ),
        );
        expect(orders.every((error) => error instanceof FleetOrderError)).toBe(true);
        expect(sent).not.toHaveBeenCalled();
        sent.mockRestore();
        await s!.store.fleet.release(target).catch(() => undefined);
      }
      // A few reconcile intervals with the node down, failures going on.
      for (let round = 0; round < 6; round++) {
        for (const s of stores) for (const n of BREAKERS) await fail(s.breakers.get(n)!);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(stores.map((s) => s.store.shared)).toEqual([false, false]);
      sample();
      clearInterval(sampling);
      // Until the restart: the live masters' breakers shared in every sample, the dead one's went local and stayed so.
      for (const i of [0, 1]) {
        for (const name of live)
          expect({ name, s: series.get(`${i}:${name}`) }).toEqual({ name, s: [true] });
        for (const name of dead)
          expect({ name, s: series.get(`${i}:${name}`) }).toEqual({ name, s: [true, false] });
      }

      await cluster.restart(victim);
      await eventually(
        'every breaker sharing again',
        () =>
          stores.every((s) => s.store.shared && BREAKERS.every((n) => sharedOf(s, n) === true))
            ? true
            : undefined,
        20_000,
      );
      // One warning per store for the outage, and one line when it ended (at the next read of every breaker).
      await eventually('the end of the outage in both stores', () =>
        stores.every((s) => s.lines.length > 1) ? true : undefined,
      );
      for (const s of stores)
        expect(s.lines.map((line) => line.replace(/\(.*\)|\d+ ms/g, '…'))).toEqual([
          'warn: Redis is unreachable …: every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back.',
          'Redis is reachable again after …: circuit breakers share their state again.',
        ]);
    } finally {
      for (const { store, redis } of opened) {
        await store.close();
        redis.disconnect();
      }
    }
  }
}
