import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import { RedisBreakerStore } from '../../lib/redis/index.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually, nextTransition } from './helpers/wait.js';

// The default quorum ('auto') counts the replicas that report to the store:
// two replicas open together (a quorum of 2 meant no sharing at all: each
// called the dead dependency until its own window tripped), while from three
// replicas on one replica with trouble of its own still cannot open the others.
// Several stores in one process stand for replicas, on a real redis-server.

const available = redisServerAvailable();
// No `share` option: the default quorum.
const OPTIONS: BreakerOptions = { consecutiveFailures: 1, openDurationMs: 60_000 };

let server: RedisServer;
let admin: Redis;
let prefixSeq = 0;
const opened: { store: RedisBreakerStore; redis: Redis }[] = [];

interface Replica {
  store: RedisBreakerStore;
  breaker: Breaker;
  lines: string[];
}

async function replica(
  instanceId: string,
  prefix: string,
  options: { reconcileIntervalMs?: number; extra?: Record<string, BreakerOptions> } = {},
): Promise<Replica> {
  const redis = new Redis(server.port, '127.0.0.1');
  const lines: string[] = [];
  const store = new RedisBreakerStore({
    redis,
    keyPrefix: prefix,
    instanceId,
    // Driven by the test unless told: the timer never fires by itself.
    reconcileIntervalMs: options.reconcileIntervalMs ?? 600_000,
    logger: { warn: (m) => lines.push(`warn: ${m}`), log: (m) => lines.push(m) },
  });
  opened.push({ store, redis });
  const breaker = new Breaker('pay', OPTIONS, { coordinator: store.coordinator });
  const extra = Object.entries(options.extra ?? {}).map(
    ([name, o]) => new Breaker(name, o, { coordinator: store.coordinator }),
  );
  await store.hydrate([breaker, ...extra]);
  return { store, breaker, lines };
}

/** A fleet of `n` replicas, each counting the others (one report each once all have started, as every interval does). */
async function fleet(n: number): Promise<Replica[]> {
  const prefix = `qa${++prefixSeq}:`;
  const replicas: Replica[] = [];
  for (let i = 0; i < n; i++) replicas.push(await replica(`r${i}`, prefix));
  for (const r of replicas)
    await (r.store as unknown as { replicas: { report(): Promise<void> } }).replicas.report();
  expect((await replicas[0]!.store.fleetView()).replicas).toHaveLength(n);
  return replicas;
}

const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);
const statesOf = (replicas: Replica[]) => replicas.map((r) => r.breaker.state);

describe.skipIf(!available)("the default quorum 'auto': from the replicas that report", () => {
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

  it('opens a fleet of two together on one replica’s trip: the other adopts without calling the dependency', async () => {
    const [a, b] = (await fleet(2)) as [Replica, Replica];
    const adopted = nextTransition(b.breaker, (t) => t.to === 'open');
    await fail(a.breaker);
    expect(await adopted).toMatchObject({
      reason: 'shared-open',
      openUntil: a.breaker.snapshot().openUntil,
    });
    let called = 0;
    const outcome = await b.breaker
      .execute(() => {
        called++;
        return Promise.resolve('ok');
      })
      .catch((e: { reason?: string }) => e.reason);
    expect({ outcome, called }).toEqual({ outcome: 'open', called: 0 });
  });

  it('keeps a fleet of three closed on one replica’s trip, and opens it on two', async () => {
    const [a, b, c] = (await fleet(3)) as [Replica, Replica, Replica];
    await fail(a.breaker);
    await eventually("a's report", async () =>
      (await admin.zcard(`${a.store.keyPrefix}{pay}:opens`)) === 1 ? true : undefined,
    );
    for (const r of [b, c]) await r.store.reconcile();
    expect(await admin.exists(`${a.store.keyPrefix}{pay}:state`)).toBe(0);
    expect(statesOf([a, b, c])).toEqual(['open', 'closed', 'closed']);

    const adopted = nextTransition(c.breaker, (t) => t.to === 'open');
    await fail(b.breaker);
    expect(await adopted).toMatchObject({ reason: 'shared-open' });
    expect(statesOf([a, b, c])).toEqual(['open', 'open', 'open']);
  });

  it('keeps the others closed when the replica that trips alone counted the fleet before they started', async () => {
    const prefix = `qa${++prefixSeq}:`;
    // No report after start-up: a listed one replica (itself), b two; Redis lists three when a trips.
    const [a, b, c] = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    await fail(a.breaker);
    await eventually("a's report", async () =>
      (await admin.zcard(`${prefix}{pay}:opens`)) === 1 ? true : undefined,
    );
    for (const r of [b, c]) await r.store.reconcile();
    expect(await admin.exists(`${prefix}{pay}:state`)).toBe(0);
    expect(statesOf([a, b, c])).toEqual(['open', 'closed', 'closed']);
  });

  it('keeps a fleet of three closed on one replica’s trip when Redis came back empty and the others have not reported again', async () => {
    const [a, b, c] = (await fleet(3)) as [Replica, Replica, Replica];
    await server.restart();
    await eventually('a sharing again', () => (a.store.shared ? true : undefined), 10_000);
    // a reports first, more often than it remembers counts of (a short interval against the others' reconnection).
    for (let i = 0; i < 4; i++)
      await (a.store as unknown as { replicas: { report(): Promise<void> } }).replicas.report();
    expect(await admin.zcard(`${a.store.keyPrefix}{~replicas}:seen`)).toBe(1);
    await fail(a.breaker);
    await eventually("a's report", async () =>
      (await admin.zcard(`${a.store.keyPrefix}{pay}:opens`)) === 1 ? true : undefined,
    );
    for (const r of [b, c]) await r.store.reconcile();
    expect(await admin.exists(`${a.store.keyPrefix}{pay}:state`)).toBe(0);
    expect(statesOf([a, b, c])).toEqual(['open', 'closed', 'closed']);
  });

  it('keeps a fleet of five closed on one replica’s trip, and opens all five on two', async () => {
    const replicas = await fleet(5);
    await fail(replicas[0]!.breaker);
    await eventually("r0's report", async () =>
      (await admin.zcard(`${replicas[0]!.store.keyPrefix}{pay}:opens`)) === 1 ? true : undefined,
    );
    for (const r of replicas.slice(1)) await r.store.reconcile();
    expect(statesOf(replicas)).toEqual(['open', 'closed', 'closed', 'closed', 'closed']);

    const adopted = replicas.slice(2).map((r) => nextTransition(r.breaker, (t) => t.to === 'open'));
    await fail(replicas[1]!.breaker);
    expect((await Promise.all(adopted)).map((t) => t.reason)).toEqual([
      'shared-open',
      'shared-open',
      'shared-open',
    ]);
    expect(statesOf(replicas)).toEqual(['open', 'open', 'open', 'open', 'open']);
  });

  it("logs each shared breaker's quorum at start-up, and when 'auto' changes with the fleet", async () => {
    const prefix = `qa${++prefixSeq}:`;
    const extra = { search: { ...OPTIONS, share: { quorum: 3 } } };
    const a = await replica('a', prefix, { reconcileIntervalMs: 100, extra });
    expect(a.lines).toEqual([
      'Shared breakers open on every replica once this many replicas report them open: 1 (auto: 1 replica reports) for "pay"; 3 for "search".',
    ]);
    const b = await replica('b', prefix, { reconcileIntervalMs: 100, extra });
    expect(b.lines).toEqual([
      'Shared breakers open on every replica once this many replicas report them open: 1 (auto: 2 replicas report) for "pay"; 3 for "search".',
    ]);
    await replica('c', prefix, { reconcileIntervalMs: 100, extra });
    await eventually("b's count of three", () => (b.lines.length > 1 ? true : undefined));
    expect(b.lines.slice(1)).toEqual([
      "Quorum 'auto' is now 2 (was 1) for 1 shared breaker: 3 replicas report.",
    ]);
  });
});
