import type { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import { RedisBreakerStore } from '../../lib/redis/index.js';
import { deferred } from '../helpers/deferred.js';
import { keepingAllButQuorum } from './helpers/log-lines.js';
import { RedisCluster, redisClusterAvailable } from './helpers/redis-cluster.js';
import { eventually, nextTransition } from './helpers/wait.js';

// The store on a real Redis Cluster (three masters on loopback, started here):
// several stores in one process stand for replicas, each with its own Cluster
// client (made with shardedSubscribers, so signals go by sharded pub/sub).

const available = redisClusterAvailable();
const OPTIONS: BreakerOptions = {
  consecutiveFailures: 1,
  openDurationMs: 600,
  halfOpen: { maxWaitMs: 5_000 },
};
const BREAKERS = Array.from({ length: 12 }, (_, i) => `svc-${i}`);
const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);

let cluster: RedisCluster;
let prefixSeq = 0;
const opened: { store: RedisBreakerStore; redis: Cluster }[] = [];

interface Replica {
  store: RedisBreakerStore;
  breakers: Map<string, Breaker>;
  /** The store's warnings and log lines but its quorum lines, in order. */
  lines: string[];
}

async function replica(
  instanceId: string,
  prefix: string,
  names: string[],
  reconcileIntervalMs = 60_000,
): Promise<Replica> {
  const redis = cluster.client();
  const lines: string[] = [];
  const store = new RedisBreakerStore({
    redis,
    keyPrefix: prefix,
    instanceId,
    // By default no periodic reconcile within a test: what reaches another store came by a signal.
    reconcileIntervalMs,
    logger: { warn: (m) => lines.push(`warn: ${m}`), log: keepingAllButQuorum(lines) },
  });
  opened.push({ store, redis });
  const breakers = new Map(
    names.map((name) => [name, new Breaker(name, OPTIONS, { coordinator: store.coordinator })]),
  );
  await store.hydrate([...breakers.values()]);
  return { store, breakers, lines };
}

/** One report of each store to the registry of replicas, as each reconcile interval sends. */
async function reportAll(replicas: Replica[]): Promise<void> {
  for (const r of replicas)
    await (r.store as unknown as { replicas: { report(): Promise<void> } }).replicas.report();
}

/** `cmdstat_<command>` calls on the node at `port` since the last CONFIG RESETSTAT. */
async function calls(port: number, command: string): Promise<number> {
  const node = cluster.node(port);
  try {
    const stats = String(await node.info('commandstats'));
    return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  } finally {
    node.disconnect();
  }
}

async function resetStats(): Promise<void> {
  for (const { port } of cluster.nodes) {
    const node = cluster.node(port);
    await node.config('RESETSTAT');
    node.disconnect();
  }
}

describe.skipIf(!available)('RedisBreakerStore on a real Redis Cluster (sharded pub/sub)', () => {
  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 40_000);
  afterAll(async () => {
    await cluster?.close();
  });
  afterEach(async () => {
    for (const { store, redis } of opened.splice(0)) {
      await store.close();
      redis.disconnect();
    }
  });

  it('spreads breakers over the three masters, and a quorum on two stores reaches the third by SPUBLISH on the owning node, never PUBLISH', async () => {
    const prefix = `c${++prefixSeq}:`;
    const admin = cluster.node(cluster.nodes[0]!.port);
    const owners = new Map<string, number>();
    for (const name of BREAKERS) {
      const slot = Number(await admin.cluster('KEYSLOT', `${prefix}{${name}}:state`));
      // The signal channel carries the breaker's hash tag: the same slot as its keys.
      expect(Number(await admin.cluster('KEYSLOT', `${prefix}{${name}}:signals`))).toBe(slot);
      owners.set(name, cluster.owner(slot).port);
    }
    admin.disconnect();
    // Twelve breakers land on all three masters (fixed names: the slots are fixed too).
    expect(new Set(owners.values()).size).toBe(3);

    const [a, b, c] = [
      await replica('a', prefix, BREAKERS),
      await replica('b', prefix, BREAKERS),
      await replica('c', prefix, BREAKERS),
    ];
    expect([a.store.shared, b.store.shared, c.store.shared]).toEqual([true, true, true]);
    // Each store counts the replicas that report, as every reconcile interval does: on a Cluster the registry lives in
    // another slot than the breakers, so the quorum 'auto' is the one the writer last counted (3 replicas: 2).
    await reportAll([a, b, c]);
    await resetStats();

    for (const name of BREAKERS) await fail(a.breakers.get(name)!);
    await eventually(
      "a's reports",
      async () => {
        const counts = await Promise.all(
          BREAKERS.map((name) => opened[0]!.redis.zcard(`${prefix}{${name}}:opens`)),
        );
        return counts.every((n) => n === 1) ? true : undefined;
      },
      10_000,
    );
    // One report is no quorum: the others stay closed.
    await c.store.reconcile();
    expect([...c.breakers.values()].map((br) => br.state)).toEqual(BREAKERS.map(() => 'closed'));

    const adopted = BREAKERS.map((name) =>
      nextTransition(c.breakers.get(name)!, (t) => t.reason === 'shared-open', 10_000),
    );
    const alsoA = BREAKERS.map((name) =>
      eventually(
        `a aligned on ${name}`,
        () =>
          a.breakers.get(name)!.snapshot().openUntil === b.breakers.get(name)!.snapshot().openUntil
            ? true
            : undefined,
        10_000,
      ),
    );
    for (const name of BREAKERS) await fail(b.breakers.get(name)!);
    const [changes] = await Promise.all([Promise.all(adopted), Promise.all(alsoA)]);
    for (const [i, name] of BREAKERS.entries())
      expect(changes[i]!.openUntil).toBe(b.breakers.get(name)!.snapshot().openUntil);
    expect([...c.breakers.values()].map((br) => br.snapshot().coordination)).toEqual(
      BREAKERS.map(() => expect.objectContaining({ shared: true, storeErrors: 0 })),
    );

    // The quorum-making write of each breaker published once, on the node that owns the breaker, with SPUBLISH.
    for (const { port } of cluster.nodes) {
      const owned = BREAKERS.filter((name) => owners.get(name) === port).length;
      expect({ port, spublish: await calls(port, 'spublish') }).toEqual({ port, spublish: owned });
      expect({ port, publish: await calls(port, 'publish') }).toEqual({ port, publish: 0 });
    }
  }, 40_000);

  it('admits exactly one probe for the fleet across the cluster, and its success closes every store', async () => {
    const prefix = `c${++prefixSeq}:`;
    const names = ['pay'];
    const replicas = [
      await replica('a', prefix, names),
      await replica('b', prefix, names),
      await replica('c', prefix, names),
    ];
    const of = (r: Replica) => r.breakers.get('pay')!;
    await Promise.all(replicas.slice(0, 2).map((r) => fail(of(r))));
    await eventually(
      'every store open',
      () => (replicas.every((r) => of(r).lastDecidedState === 'open') ? true : undefined),
      10_000,
    );
    const redis = opened[0]!.redis;
    await eventually(
      'the permit taken',
      async () => (await redis.get(`${prefix}{pay}:probe`)) ?? undefined,
      10_000,
    );
    const closed = Promise.all(
      replicas.map((r) => nextTransition(of(r), (t) => t.to === 'closed', 10_000)),
    );
    const gate = deferred<void>();
    let reached = 0;
    const burst = () =>
      Promise.all(
        replicas.flatMap((r) =>
          Array.from({ length: 100 }, () =>
            of(r)
              .execute(() => {
                reached++;
                return gate.promise;
              })
              .then(
                () => 'ok',
                (e: { reason?: string }) => e.reason,
              ),
          ),
        ),
      );
    // The permit read above may be seen before its holder has heard its own win (another connection, another node):
    // then every call of the burst is rejected as open, and the burst is repeated (at most four times).
    let outcomes = burst();
    for (let round = 0; round < 4; round++) {
      if (reached > 0) break;
      expect(new Set(await outcomes)).toEqual(new Set(['open']));
      await new Promise((resolve) => setTimeout(resolve, 50));
      outcomes = burst();
    }
    expect(reached).toBe(1);
    // The probe is in flight: the short claim became the probe deadline (halfOpen.maxWaitMs 5,000).
    await eventually(
      'the permit renewed',
      async () => ((await redis.pttl(`${prefix}{pay}:probe`)) > 1_000 ? true : undefined),
      10_000,
    );
    gate.resolve();
    const tally = (await outcomes).reduce<Record<string, number>>(
      (counts, v) => ({ ...counts, [String(v)]: (counts[String(v)] ?? 0) + 1 }),
      {},
    );
    expect(tally).toEqual({ ok: 1, 'half-open-busy': 99, open: 200 });
    const reasons = (await closed).map((t) => t.reason);
    expect(reasons.filter((reason) => reason === 'probes-succeeded')).toHaveLength(1);
    expect(reasons.filter((reason) => reason === 'shared-close')).toHaveLength(2);
    expect(await redis.exists(`${prefix}{pay}:probe`)).toBe(0);
  }, 40_000);

  it('keeps deciding locally, with no Redis error to a caller, while a master is killed mid-traffic, and shares again once the cluster heals', async () => {
    const prefix = `c${++prefixSeq}:`;
    const admin = cluster.node(cluster.nodes[0]!.port);
    const slotOf = async (name: string) =>
      Number(await admin.cluster('KEYSLOT', `${prefix}{${name}}:state`));
    const victim = cluster.owner(await slotOf(BREAKERS[0]!)).port;
    const owned: string[] = [];
    for (const n of BREAKERS) if (cluster.owner(await slotOf(n)).port === victim) owned.push(n);
    admin.disconnect();
    // A reconcile every 500 ms: what notices that the cluster answers again (one PING), as in the single-server outage scenario.
    const [a, b, c] = [
      await replica('a', prefix, BREAKERS, 500),
      await replica('b', prefix, BREAKERS, 500),
      await replica('c', prefix, BREAKERS, 500),
    ];
    const stores = [a, b, c];
    const upstreamError = new Error('upstream down');
    // Traffic on every breaker of every store the whole time: what a caller sees is the upstream's answer or a rejection.
    const seen = new Map<string, number>();
    const run = { traffic: true };
    const loops = stores.map(async (r) => {
      while (run.traffic) {
        await Promise.all(
          [...r.breakers.entries()].map(([name, breaker]) =>
            breaker
              .execute(() =>
                name === 'svc-1' ? Promise.reject(upstreamError) : Promise.resolve('ok'),
              )
              .then(
                (v) => v,
                (e: unknown) =>
                  e === upstreamError
                    ? 'upstream'
                    : `rejected:${(e as { reason?: string }).reason}`,
              )
              .then((outcome) => seen.set(String(outcome), (seen.get(String(outcome)) ?? 0) + 1)),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });

    // Whether each store shares, every 20 ms from the kill until the node is back: once local, it stays local.
    const samples: string[][] = stores.map(() => []);
    const sampling = setInterval(
      () =>
        stores.forEach((r, i) => {
          const state = (r.store as unknown as { connection: { state: string } }).connection.state;
          const sample = `${r.store.shared} ${state}`;
          if (samples[i]!.at(-1) !== sample) samples[i]!.push(sample);
        }),
      20,
    );
    await cluster.kill(victim);
    await eventually(
      'every store deciding locally',
      () => (stores.every((r) => !r.store.shared) ? true : undefined),
      15_000,
    );
    // Local decisions: a fresh failure on a breaker owned by the dead node opens that store's breaker alone.
    const lone = a.breakers.get(BREAKERS[0]!)!;
    await fail(lone);
    expect(lone.state).toBe('open');
    // Local as soon as a command on its own keys failed (its transition's write, if no read got there first).
    await eventually(
      'the lone breaker local',
      () => (lone.snapshot().coordination?.shared === false ? true : undefined),
      5_000,
    );
    expect(b.breakers.get(BREAKERS[0]!)!.state).toBe('closed');

    // A few reconcile intervals with the node down: the other masters answer PINGs all along.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    clearInterval(sampling);
    await cluster.restart(victim);
    for (const series of samples) {
      const firstLocal = series.findIndex((sample) => sample.startsWith('false'));
      expect(firstLocal).toBeGreaterThanOrEqual(0);
      expect({
        series,
        shared: series.slice(firstLocal).filter((x) => x.startsWith('true')),
      }).toEqual({ series, shared: [] });
    }
    await eventually(
      'every store sharing again',
      () => (stores.every((r) => r.store.shared) ? true : undefined),
      20_000,
    );
    // One warning per store for the whole outage, and one line when it ended.
    for (const r of stores)
      expect(r.lines.map((line) => line.replace(/\(.*\)|\d+ ms/g, '…'))).toEqual([
        'warn: Redis is unreachable …: every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back.',
        'Redis is reachable again after …: circuit breakers share their state again.',
      ]);
    run.traffic = false;
    await Promise.all(loops);
    // Only the upstream's errors and the breakers' own rejections: no Redis error reached a caller.
    const allowed = ['ok', 'upstream', 'rejected:open', 'rejected:half-open-busy'];
    expect([...seen.keys()].filter((k) => !allowed.includes(k))).toEqual([]);
    expect(seen.get('ok')).toBeGreaterThan(0);

    // Sharing back on the healed node (empty: no persistence): a quorum of a and b on another breaker it owns reaches c.
    const target = owned.find((n) => n !== BREAKERS[0] && n !== 'svc-1');
    expect(target).toBeDefined();
    const adopted = nextTransition(
      c.breakers.get(target!)!,
      (t) => t.reason === 'shared-open',
      10_000,
    );
    await fail(a.breakers.get(target!)!);
    await fail(b.breakers.get(target!)!);
    expect(await adopted).toMatchObject({
      reason: 'shared-open',
      openUntil: b.breakers.get(target!)!.snapshot().openUntil,
    });
    // Signalled by SPUBLISH on the restarted node (its statistics start with it).
    expect(await calls(victim, 'spublish')).toBeGreaterThanOrEqual(1);
    expect(await calls(victim, 'publish')).toBe(0);
  }, 60_000);
});
