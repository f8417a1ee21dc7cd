import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, isCallRejected, type BreakerOptions, type Clock } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { RedisBreakerStore, type RedisBreakerStoreOptions } from '../../lib/redis/index.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually, nextTransition } from './helpers/wait.js';
import { keepingAllButQuorum } from './helpers/log-lines.js';

// The store against a real Redis, with several stores in one process standing
// for replicas (each with its own connections and instance id). The scenarios
// with separate processes are in the *.scenario.spec.ts files.

const available = redisServerAvailable();
const OPTIONS: BreakerOptions = {
  consecutiveFailures: 1,
  openDurationMs: 400,
  halfOpen: { maxWaitMs: 2_000 },
};
const tally = (values: unknown[]) =>
  values.reduce<Record<string, number>>(
    (counts, v) => ({ ...counts, [String(v)]: (counts[String(v)] ?? 0) + 1 }),
    {},
  );
const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);

/**
 * How `promise` has settled once only microtasks have run: no timer and no I/O
 * (no Redis reply) can have been handled meanwhile. `pending` if it waits for more.
 */
async function settledWithoutIo(
  promise: Promise<unknown>,
): Promise<{ resolved: unknown } | { rejected: unknown } | 'pending'> {
  let outcome: { resolved: unknown } | { rejected: unknown } | 'pending' = 'pending';
  promise.then(
    (value) => (outcome = { resolved: value }),
    (error: unknown) => (outcome = { rejected: error }),
  );
  for (let i = 0; i < 50; i++) await Promise.resolve();
  return outcome;
}

let server: RedisServer;
let admin: Redis;
let prefixSeq = 0;
const opened: { store: RedisBreakerStore; redis: Redis }[] = [];

/** A loopback port where no Redis listens (one did a moment ago). */
async function closedPort(): Promise<number> {
  const gone = await RedisServer.start();
  await gone.kill();
  return gone.port;
}

/** EVALs run by the test's Redis so far (every store operation but reads is one). */
async function evalCalls(): Promise<number> {
  const stats = String(await admin.info('commandstats'));
  return Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Replica {
  store: RedisBreakerStore;
  breaker: Breaker;
  warnings: string[];
}

async function replica(
  instanceId: string,
  prefix: string,
  options: BreakerOptions = OPTIONS,
  storeOptions: Partial<RedisBreakerStoreOptions> = {},
  port = server.port,
  clock?: Clock,
): Promise<Replica> {
  const redis = new Redis(port, '127.0.0.1', { retryStrategy: () => 50, maxRetriesPerRequest: 1 });
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
  const breaker = new Breaker('payments', options, {
    coordinator: store.coordinator,
    ...(clock === undefined ? {} : { clock }),
  });
  await store.hydrate([breaker]);
  return { store, breaker, warnings };
}

describe.skipIf(!available)('RedisBreakerStore on a real Redis', () => {
  let prefix: string;

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.port, '127.0.0.1');
  });

  afterAll(async () => {
    await admin?.quit();
    await server?.kill();
  });

  // Every test has keys and a channel of its own.
  beforeEach(() => {
    prefix = `t${++prefixSeq}:`;
  });

  afterEach(async () => {
    for (const { store, redis } of opened.splice(0)) {
      await store.close();
      redis.disconnect();
    }
  });

  it('adopts an open once two replicas report it, not after one, until the latest open-until', async () => {
    const [a, b, c] = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    await fail(a.breaker);
    await eventually('the report of a', async () =>
      (await admin.zcard(`${prefix}{payments}:opens`)) === 1 ? true : undefined,
    );
    await c.store.reconcile();
    expect([b.breaker.state, c.breaker.state]).toEqual(['closed', 'closed']);
    expect(await admin.hgetall(`${prefix}{payments}:state`)).toEqual({});

    const adopted = nextTransition(c.breaker, (change) => change.reason === 'shared-open');
    await fail(b.breaker);
    const change = await adopted;
    const bUntil = b.breaker.snapshot().openUntil!;
    expect(change.openUntil).toBe(bUntil);
    // The first opener is aligned to the fleet's time too: the whole fleet reaches the end of its open period together.
    await eventually('a aligned to the fleet', () =>
      a.breaker.snapshot().openUntil === bUntil ? true : undefined,
    );
    expect(await admin.hgetall(`${prefix}{payments}:state`)).toMatchObject({
      state: 'open',
      openUntil: String(bUntil),
      origin: 'b',
      reports: '2',
    });
  });

  it("signals by SPUBLISH on the breaker's own channel with pubsub: sharded on a single Redis 7, never PUBLISH", async () => {
    const published = async () => {
      const stats = String(await admin.info('commandstats'));
      return ['spublish', 'publish'].map((c) =>
        Number(new RegExp(`cmdstat_${c}:calls=(\\d+)`).exec(stats)?.[1] ?? 0),
      );
    };
    const sharded = { pubsub: 'sharded' } as const;
    const [a, b, c] = [
      await replica('a', prefix, OPTIONS, sharded),
      await replica('b', prefix, OPTIONS, sharded),
      await replica('c', prefix, OPTIONS, sharded),
    ];
    const [spublish, publish] = await published();
    const adopted = nextTransition(c.breaker, (change) => change.reason === 'shared-open');
    await fail(a.breaker);
    await eventually('the report of a', async () =>
      (await admin.zcard(`${prefix}{payments}:opens`)) === 1 ? true : undefined,
    );
    await fail(b.breaker);
    expect((await adopted).openUntil).toBe(b.breaker.snapshot().openUntil);
    expect(await published()).toEqual([spublish! + 1, publish]);
    expect(await admin.pubsub('SHARDNUMSUB', `${prefix}{payments}:signals`)).toEqual([
      `${prefix}{payments}:signals`,
      3,
    ]);
  });

  it('admits exactly one probe for the fleet when the open period ends, and its success closes every replica', async () => {
    const replicas = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    await Promise.all(replicas.slice(0, 2).map((r) => fail(r.breaker)));
    await eventually('every replica open', () =>
      replicas.every((r) => r.breaker.lastDecidedState === 'open') ? true : undefined,
    );
    const until = Math.max(...replicas.map((r) => r.breaker.snapshot().openUntil!));
    // The permit is asked for when the open period ends; calls after that find the answer.
    await eventually(
      'the permit taken',
      async () => (await admin.get(`${prefix}{payments}:probe`)) ?? undefined,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(until);
    const holder = await admin.get(`${prefix}{payments}:probe`);
    // Taken before any call: only a short claim, until the holder's probe really starts.
    expect(await admin.pttl(`${prefix}{payments}:probe`)).toBeLessThanOrEqual(1_000);
    const closedEverywhere = Promise.all(
      replicas.map((r) => nextTransition(r.breaker, (change) => change.to === 'closed')),
    );
    // Every call stays in flight until all have been made: they are concurrent, as a burst of traffic is.
    const gate = deferred<void>();
    let reached = 0;
    const outcomes = Promise.all(
      replicas.flatMap((r) =>
        Array.from({ length: 50 }, () =>
          r.breaker
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
    expect(reached).toBe(1);
    // The probe is in flight: the claim became the probe deadline (halfOpen.maxWaitMs 2,000).
    await eventually('the permit renewed', async () =>
      (await admin.pttl(`${prefix}{payments}:probe`)) > 1_000 ? true : undefined,
    );
    gate.resolve();
    expect(tally(await outcomes)).toEqual({ ok: 1, 'half-open-busy': 49, open: 100 });
    const reasons = (await closedEverywhere).map((change) => change.reason);
    const holderIndex = ['a', 'b', 'c'].indexOf(holder!);
    expect(reasons[holderIndex]).toBe('probes-succeeded');
    expect(reasons.filter((reason) => reason === 'shared-close')).toHaveLength(2);
    expect(await admin.exists(`${prefix}{payments}:probe`, `${prefix}{payments}:opens`)).toBe(0);
  });

  it('stops probing when its claim lapsed and another replica took the permit before the renewal reached Redis', async () => {
    // One manual clock for both replicas: no wait below depends on how fast the machine is, only on Redis answering.
    const clock = new ManualClock(Date.now());
    const replicas = [
      await replica('a', prefix, OPTIONS, {}, server.port, clock),
      await replica('b', prefix, OPTIONS, {}, server.port, clock),
    ];
    await Promise.all(replicas.map((r) => fail(r.breaker)));
    await eventually('the fleet open', async () =>
      (await admin.hget(`${prefix}{payments}:state`, 'state')) === 'open' ? true : undefined,
    );
    // Both replicas follow the fleet's open (read from Redis), and its open period is over.
    await Promise.all(replicas.map((r) => r.store.reconcile()));
    clock.advance(400);
    // Both ask for the permit (the coordinator's question before a probe); the holder is the one it answers yes.
    const holder = await eventually('the permit won', () =>
      replicas.find((r) => r.store.coordinator.mayProbe(r.breaker)),
    );
    const key = `${prefix}{payments}:probe`;
    expect(await admin.get(key)).toBe(['a', 'b'][replicas.indexOf(holder)]);
    // The holder stalls past its claim, which lapses; a replica "z" takes the permit meanwhile.
    await admin.set(key, 'z', 'PX', 5_000);
    const reopened = nextTransition(holder.breaker, (change) => change.to === 'open');
    const gate = deferred<string>();
    const probe = holder.breaker.execute(() => gate.promise);
    expect(holder.breaker.state).toBe('half-open');
    // The renewal finds z's permit: the holder is open again, waiting for z's verdict as every other replica does,
    // for what is left on z's permit (about 5 s) but at most its own halfOpen.maxWaitMs (2 s): then it asks again.
    const change = await reopened;
    expect(change.reason).toBe('shared-open');
    expect(change.openUntil).toBe(clock.now() + 2_000);
    expect(
      await holder.breaker.execute(() => 'a second probe').catch((e: unknown) => e),
    ).toMatchObject({ reason: 'open' });
    expect(await admin.get(key)).toBe('z');
    // Its abandoned probe is no verdict.
    gate.resolve('ok');
    await expect(probe).resolves.toBe('ok');
    expect(holder.breaker.lastDecidedState).toBe('open');
    expect(await admin.hget(`${prefix}{payments}:state`, 'state')).toBe('open');
  });

  it('takes the permit again on half-opening when its claim lapsed and nobody took it', async () => {
    const replicas = [await replica('a', prefix), await replica('b', prefix)];
    await Promise.all(replicas.map((r) => fail(r.breaker)));
    const key = `${prefix}{payments}:probe`;
    const holderId = await eventually(
      'the permit taken',
      async () => (await admin.get(key)) ?? undefined,
    );
    const holder = replicas[['a', 'b'].indexOf(holderId)]!;
    await admin.del(key);
    const gate = deferred<string>();
    const probe = holder.breaker.execute(() => gate.promise);
    await eventually('the permit taken again for the probe deadline', async () =>
      (await admin.pttl(key)) > 1_000 ? true : undefined,
    );
    expect(await admin.get(key)).toBe(holderId);
    expect(holder.breaker.state).toBe('half-open');
    gate.resolve('ok');
    await probe;
    await eventually('every replica closed', () =>
      replicas.every((r) => r.breaker.lastDecidedState === 'closed') ? true : undefined,
    );
  });

  it('takes over a probe permit that has no expiry (a hand fix, a restore) instead of spinning on it, and the fleet closes', async () => {
    const replicas = [await replica('a', prefix), await replica('b', prefix)];
    await Promise.all(replicas.map((r) => fail(r.breaker)));
    const key = `${prefix}{payments}:probe`;
    await eventually('the fleet open', async () =>
      (await admin.hget(`${prefix}{payments}:state`, 'state')) === 'open' ? true : undefined,
    );
    // Left by nobody alive, and without a TTL it would never lapse by itself.
    await admin.set(key, 'ghost');
    const evalsBefore = await evalCalls();
    const holderId = await eventually('the permit taken over', async () => {
      const holder = await admin.get(key);
      return holder === 'ghost' ? undefined : (holder ?? undefined);
    });
    expect(await admin.pttl(key)).toBeGreaterThan(0);
    const holder = replicas[['a', 'b'].indexOf(holderId)]!;
    await expect(holder.breaker.execute(() => 'probe')).resolves.toBe('probe');
    await eventually('every replica closed', () =>
      replicas.every((r) => r.breaker.lastDecidedState === 'closed') ? true : undefined,
    );
    // Two permit requests, a renewal and a close verdict, not one EVAL per replica every couple of milliseconds.
    expect((await evalCalls()) - evalsBefore).toBeLessThanOrEqual(6);
  });

  it('keeps coordinating after a junk generation in the state hash and a forged one on the channel (>= 2^53, 1e308)', async () => {
    const replicas = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    const [a, b, c] = replicas;
    const stateKey = `${prefix}{payments}:state`;
    await admin.hset(stateKey, {
      state: 'closed',
      openUntil: '0',
      generation: '1e308',
      origin: 'junk',
      at: '0',
    });
    await c!.store.reconcile();
    // Pub/sub delivers in order: once c has adopted the sentinel's signal, it has handled the forged one before it.
    const sentinel = new Breaker('sentinel', OPTIONS, { coordinator: c!.store.coordinator });
    await c!.store.hydrate([sentinel]);
    const sentinelOpened = nextTransition(sentinel, (change) => change.reason === 'shared-open');
    const signal = (name: string, g: number, s: string) =>
      JSON.stringify({
        v: 1,
        b: name,
        s,
        u: s === 'open' ? Date.now() + 300 : 0,
        g,
        o: 'forger',
        a: 0,
      });
    await admin.publish(`${prefix}signals`, signal('payments', 2 ** 53 - 2, 'closed'));
    await admin.publish(`${prefix}signals`, signal('sentinel', 1, 'open'));
    await sentinelOpened;

    const adopted = nextTransition(c!.breaker, (change) => change.reason === 'shared-open');
    await Promise.all([fail(a!.breaker), fail(b!.breaker)]);
    await adopted;
    // The script repaired the junk: the fleet's generation is a time again, and the next change still grows it.
    // A generation is max(previous + 1, now): two changes in one millisecond put it 1 ms ahead of the clock.
    const generation = Number(await admin.hget(stateKey, 'generation'));
    expect(generation).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(generation).toBeGreaterThan(Date.now() - 60_000);
    const holderId = await eventually(
      'the permit taken',
      async () => (await admin.get(`${prefix}{payments}:probe`)) ?? undefined,
    );
    const holder = replicas[['a', 'b', 'c'].indexOf(holderId)]!;
    const others = replicas
      .filter((r) => r !== holder)
      .map((r) => nextTransition(r.breaker, (change) => change.reason === 'shared-close'));
    // The holder's coordinator learns it holds the permit asynchronously: until then it answers "not yet" (rejected, no permit spent).
    const probed = await eventually('the holder admitting its probe', () =>
      holder.breaker
        .execute(() => 'probe')
        .catch((error: unknown) => {
          if (isCallRejected(error)) return undefined;
          throw error;
        }),
    );
    expect(probed).toBe('probe');
    await Promise.all(others);
    expect(Number(await admin.hget(stateKey, 'generation'))).toBeGreaterThan(generation);
  });

  it("reopens every replica when the fleet probe fails, with the prober's new open period", async () => {
    const replicas = [await replica('a', prefix), await replica('b', prefix)];
    await Promise.all(replicas.map((r) => fail(r.breaker)));
    await eventually(
      'the permit taken',
      async () => (await admin.get(`${prefix}{payments}:probe`)) ?? undefined,
    );
    const holder = replicas[['a', 'b'].indexOf((await admin.get(`${prefix}{payments}:probe`))!)]!;
    const other = replicas.find((r) => r !== holder)!;
    await expect(fail(holder.breaker)).resolves.toMatchObject({ message: 'down' });
    expect(holder.breaker.lastDecidedState).toBe('open');
    const reopenedUntil = holder.breaker.snapshot().openUntil!;
    // The other replica was still open (waiting for the verdict): it keeps rejecting until the prober's new time.
    await eventually('the other replica following the reopen', () =>
      other.breaker.snapshot().openUntil === reopenedUntil ? true : undefined,
    );
    expect(other.breaker.state).toBe('open');
    expect(await admin.hget(`${prefix}{payments}:state`, 'openUntil')).toBe(String(reopenedUntil));
  });

  it('starts a replica open during an outage, before it serves', async () => {
    const [a, b] = [await replica('a', prefix), await replica('b', prefix)];
    await Promise.all([fail(a.breaker), fail(b.breaker)]);
    await eventually('the fleet open', async () =>
      (await admin.hget(`${prefix}{payments}:state`, 'state')) === 'open' ? true : undefined,
    );
    const late = await replica('late', prefix);
    expect(late.breaker.snapshot()).toMatchObject({
      state: 'open',
      openUntil: b.breaker.snapshot().openUntil,
      coordination: { shared: true, storeErrors: 0 },
    });
  });

  it('escapes breaker names in keys and keeps applications with different prefixes apart', async () => {
    const name = 'GET /orders/{id}*';
    const other = `${prefix}other:`;
    const stores = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('x', other),
      await replica('y', other),
    ].map((r) => r.store);
    const breakers = stores.map(
      (store) => new Breaker(name, OPTIONS, { coordinator: store.coordinator }),
    );
    await Promise.all(stores.map((store, i) => store.hydrate([breakers[i]!])));
    await Promise.all([fail(breakers[0]!), fail(breakers[1]!)]);
    await eventually('the fleet open', async () =>
      (await admin.hget(`${prefix}{GET%20%2Forders%2F%7Bid%7D%2A}:state`, 'state')) === 'open'
        ? true
        : undefined,
    );
    await Promise.all(stores.map((store) => store.reconcile()));
    expect(breakers.map((b) => b.lastDecidedState)).toEqual(['open', 'open', 'closed', 'closed']);
    expect(new Set(await admin.keys(`${prefix}{*`))).toEqual(
      new Set([
        `${prefix}{GET%20%2Forders%2F%7Bid%7D%2A}:opens`,
        `${prefix}{GET%20%2Forders%2F%7Bid%7D%2A}:state`,
        // The prefix's change log (its own hash tag: `~` is escaped in names, so no breaker has it).
        `${prefix}{~changes}:version`,
        `${prefix}{~changes}:log`,
        // The registry of the replicas that report (fleetView()), under a tag of its own too.
        `${prefix}{~replicas}:seen`,
        `${prefix}{~replicas}:reports`,
      ]),
    );
  });

  it('fails open when Redis stops answering (a frozen server): the probe goes local, and the verdict reaches the fleet once Redis answers again', async () => {
    const clock = new ManualClock(Date.now());
    const fast = { operationTimeoutMs: 200, reconcileIntervalMs: 100 };
    const a = await replica('a', prefix, OPTIONS, fast, server.port, clock);
    const b = await replica('b', prefix, OPTIONS, fast, server.port, clock);
    await Promise.all([fail(a.breaker), fail(b.breaker)]);
    await eventually('the fleet open', async () =>
      (await admin.hget(`${prefix}{payments}:state`, 'state')) === 'open' ? true : undefined,
    );
    server.pause();
    try {
      clock.advance(400);
      // The permit request goes out and hangs: the call is rejected at once, it never waits for Redis. Only
      // microtasks run before the check, so no reply (no I/O at all) can have been handled in between.
      expect(await settledWithoutIo(a.breaker.execute(() => 'too early'))).toMatchObject({
        rejected: { reason: 'open' },
      });
      await eventually('a giving up on Redis', () => (a.store.shared ? undefined : true), 2_000);
      // Fail open: the probe is local now.
      await expect(a.breaker.execute(() => 'probe')).resolves.toBe('probe');
      expect(a.breaker.snapshot()).toMatchObject({
        state: 'closed',
        coordination: { shared: false },
      });
      expect(a.warnings).toEqual([
        'Redis is unreachable (the probe permit did not answer within 200 ms (operationTimeoutMs)): every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back.',
      ]);
      expect(b.breaker.lastDecidedState).toBe('open');
      const closed = nextTransition(b.breaker, (change) => change.reason === 'shared-close');
      server.resume();
      // a's verdict was kept and is written once Redis answers: b closes on it.
      await closed;
      expect(a.store.shared).toBe(true);
      expect(a.warnings).toHaveLength(1);
    } finally {
      server.resume();
    }
  });

  it('closes the subscriber it made and leaves the client alone, unless closeClient', async () => {
    const mine = new Redis(server.port, '127.0.0.1');
    const kept = new RedisBreakerStore({ redis: mine, keyPrefix: prefix, logger: false });
    await kept.hydrate([new Breaker('a', OPTIONS, { coordinator: kept.coordinator })]);
    expect(kept.shared).toBe(true);
    await kept.close();
    expect(mine.status).toBe('ready');
    const given = new RedisBreakerStore({
      redis: mine,
      keyPrefix: prefix,
      logger: false,
      closeClient: true,
    });
    await given.hydrate([new Breaker('b', OPTIONS, { coordinator: given.coordinator })]);
    await given.close();
    expect(mine.status).toBe('end');
    // Every connection the store made is gone: only the test's own admin connection is left.
    expect(
      String(await admin.client('LIST'))
        .trim()
        .split('\n'),
    ).toHaveLength(1);
  });

  it('fails open when Redis is unreachable from the start: local breaking works, one warning, shared: false', async () => {
    const port = await closedPort();
    const clock = new ManualClock(Date.now());
    const started = Date.now();
    const lonely = await replica('lonely', prefix, OPTIONS, { hydrateTimeoutMs: 300 }, port, clock);
    // Start-up waited for Redis no longer than its deadline.
    expect(Date.now() - started).toBeLessThan(1_000);
    for (let i = 0; i < 3; i++)
      expect(await fail(lonely.breaker)).toMatchObject(
        i === 0 ? { message: 'down' } : { reason: 'open' },
      );
    clock.advance(400);
    // The open period is over and no Redis answers: the breaker probes on its own.
    await expect(lonely.breaker.execute(() => 'probe')).resolves.toBe('probe');
    expect(lonely.breaker.snapshot().coordination).toEqual({
      shared: false,
      storeErrors: expect.any(Number),
    });
    expect(lonely.breaker.snapshot().coordination!.storeErrors).toBeGreaterThan(0);
    expect(lonely.warnings).toHaveLength(1);
    expect(lonely.warnings[0]).toMatch(
      /^Redis is unreachable \(.+\): every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back\.$/,
    );
  });
  it('prints no ioredis error while Redis is down before the store starts, and warns once when it does', async () => {
    const port = await closedPort();
    // ioredis prints "[ioredis] Unhandled error event" for every error of a connection nobody listens to.
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const redis = new Redis(port, '127.0.0.1', {
        retryStrategy: () => 20,
        maxRetriesPerRequest: 1,
      });
      redis.on('error', () => undefined);
      const warnings: string[] = [];
      const store = new RedisBreakerStore({
        redis,
        keyPrefix: prefix,
        hydrateTimeoutMs: 200,
        logger: { warn: (m) => warnings.push(m), log: () => undefined },
      });
      opened.push({ store, redis });
      await sleep(300);
      expect(printed).not.toHaveBeenCalled();
      expect(warnings).toEqual([]);
      await store.hydrate([new Breaker('payments', OPTIONS, { coordinator: store.coordinator })]);
      await sleep(300);
      expect(printed).not.toHaveBeenCalled();
      expect(warnings).toHaveLength(1);
      expect(store.storeErrors).toBeGreaterThan(1);
    } finally {
      printed.mockRestore();
    }
  });
  it('prints nothing for a client made as the README makes it (no error listener of its own) while Redis is down at boot', async () => {
    const port = await closedPort();
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      let retries = 0;
      // As in the README: the client is made in the store's options, with nobody listening to its errors but the store.
      const redis = new Redis(`redis://127.0.0.1:${port}`, {
        retryStrategy: () => (++retries, 20),
      });
      const store = new RedisBreakerStore({
        redis,
        keyPrefix: prefix,
        hydrateTimeoutMs: 200,
        closeClient: true,
        logger: false,
      });
      opened.push({ store, redis });
      // Every retry follows a refused connection, and so an error event.
      await eventually('three refused connections', () => (retries >= 3 ? true : undefined));
      expect(printed).not.toHaveBeenCalled();
      await store.hydrate([new Breaker('payments', OPTIONS, { coordinator: store.coordinator })]);
      const seen = retries;
      await eventually('three more refused connections', () =>
        retries >= seen + 3 ? true : undefined,
      );
      await store.close();
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
  });
  it('sends nothing more to a frozen Redis until it answers what it was sent: one round of reads per breaker at most, then one PING', async () => {
    const redis = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 });
    redis.on('error', () => undefined);
    const warnings: string[] = [];
    const logs: string[] = [];
    const store = new RedisBreakerStore({
      redis,
      keyPrefix: prefix,
      operationTimeoutMs: 100,
      reconcileIntervalMs: 20,
      logger: { warn: (m) => warnings.push(m), log: keepingAllButQuorum(logs) },
    });
    opened.push({ store, redis });
    const breakers = Array.from(
      { length: 50 },
      (_, i) => new Breaker(`b${i}`, OPTIONS, { coordinator: store.coordinator }),
    );
    await store.hydrate(breakers);
    // What ioredis holds for this connection: sent and unanswered, or waiting to be sent.
    const queued = () => {
      const internals = redis as unknown as {
        commandQueue: { length: number };
        offlineQueue: { length: number };
      };
      return internals.commandQueue.length + internals.offlineQueue.length;
    };
    const sent = { hgetall: 0, hmget: 0, ping: 0 };
    const hgetall = redis.hgetall.bind(redis);
    const hmget = redis.hmget.bind(redis);
    vi.spyOn(redis, 'hmget').mockImplementation(
      ((key: string, ...fields: string[]) => (
        sent.hmget++,
        hmget(key, ...fields)
      )) as typeof redis.hmget,
    );
    const ping = redis.ping.bind(redis);
    vi.spyOn(redis, 'hgetall').mockImplementation(
      ((key: string) => (sent.hgetall++, hgetall(key))) as typeof redis.hgetall,
    );
    vi.spyOn(redis, 'ping').mockImplementation((() => (sent.ping++, ping())) as typeof redis.ping);
    server.pause();
    try {
      await eventually(
        'the store giving up on Redis',
        () => (store.shared ? undefined : true),
        2_000,
      );
      // Frozen, the connection still looks ready: a round per interval (20 ms) would pile up without end.
      await sleep(600);
      expect(redis.status).toBe('ready');
      // The periodic reconcile asks the change log's head first (one HMGET, whatever the number of breakers): it hangs, and nothing follows it.
      expect(sent.hgetall).toBe(0);
      expect(sent.hmget).toBeLessThanOrEqual(2);
      expect(queued()).toBeLessThanOrEqual(3 * breakers.length);
      expect(warnings).toHaveLength(1);
    } finally {
      server.resume();
    }
    // Once the frozen reads are answered, a PING finds Redis back, and every breaker is read again
    // (three hashes each: its state, and the fleet's force and reconfiguration), in one batch here.
    await eventually('sharing resumed', () => (store.shared ? true : undefined), 3_000);
    await eventually(
      'the breakers read again',
      () => (sent.hgetall >= 3 * breakers.length ? true : undefined),
      3_000,
    );
    expect(sent.ping).toBeGreaterThanOrEqual(1);
    expect(warnings).toHaveLength(1);
    expect(logs).toEqual([expect.stringMatching(/^Redis is reachable again after \d+ ms/)]);
    // No pile-up: at most one round in flight, the reads of every breaker beside the change log's head
    // and this replica's report for the fleet view (one at a time).
    expect(queued()).toBeLessThanOrEqual(3 * breakers.length + 2);
  });
  it('reads every breaker once at start-up, even when periodic reconciles fall due while it reads (in batches)', async () => {
    const redis = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 });
    redis.on('error', () => undefined);
    const store = new RedisBreakerStore({
      redis,
      keyPrefix: prefix,
      // Due many times during a start-up read of two batches (250 + 350 breakers).
      reconcileIntervalMs: 1,
      logger: { warn: () => undefined, log: () => undefined },
    });
    opened.push({ store, redis });
    const breakers = Array.from(
      { length: 600 },
      (_, i) => new Breaker(`b${i}`, OPTIONS, { coordinator: store.coordinator }),
    );
    let reads = 0;
    const hgetall = redis.hgetall.bind(redis);
    vi.spyOn(redis, 'hgetall').mockImplementation(
      ((key: string) => (reads++, hgetall(key))) as typeof redis.hgetall,
    );
    await store.hydrate(breakers);
    // Rounds after start-up ask the change log, which names nothing: no breaker is read again.
    await sleep(100);
    expect(store.shared).toBe(true);
    // Three hashes per breaker (its state, the fleet's force and its reconfiguration), once.
    expect(reads).toBe(3 * breakers.length);
  });

  it('waits for start-up at most hydrateTimeoutMs in all, reading included, even when an operation may take longer', async () => {
    const a = await replica('a', prefix, OPTIONS, {
      hydrateTimeoutMs: 300,
      operationTimeoutMs: 5_000,
    });
    // The connections are ready: the read is what hangs.
    server.pause();
    try {
      const started = Date.now();
      await a.store.hydrate([new Breaker('late', OPTIONS, { coordinator: a.store.coordinator })]);
      // The start-up deadline ended it, not the operation deadline.
      expect(a.warnings).toEqual([
        'Redis is unreachable (start-up could not read the shared state within 300 ms (hydrateTimeoutMs)): every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back.',
      ]);
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      server.resume();
    }
  });
});
