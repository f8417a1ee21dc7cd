import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Breaker,
  isCallRejected,
  type BreakerOptions,
  type StateChangeEvent,
} from '../../lib/core/index.js';
import { FleetOrderError, RedisBreakerStore } from '../../lib/redis/index.js';
import { channelOf } from '../../lib/redis/redis-breaker.keys.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually, nextTransition } from './helpers/wait.js';

// Fleet-wide orders (force, release, reconfigure) through a real Redis, with
// several stores in one process standing for replicas. The multi-process
// scenario, with the propagation figures, is fleet-force.scenario.spec.ts.

const available = redisServerAvailable();
const OPTIONS: BreakerOptions = { consecutiveFailures: 3, timeoutMs: 5_000 };
const ORDER = { reason: 'maintenance of the payment provider', by: 'ops@shop' };

let server: RedisServer;
let admin: Redis;
let prefixSeq = 0;
const opened: RedisBreakerStore[] = [];

interface Replica {
  store: RedisBreakerStore;
  breaker: Breaker;
  warnings: string[];
  changes: StateChangeEvent[];
}

async function replica(
  instanceId: string,
  prefix: string,
  options: { port?: number; clock?: ManualClock; breaker?: BreakerOptions } = {},
): Promise<Replica> {
  const redis = new Redis(options.port ?? server.port, '127.0.0.1', {
    retryStrategy: () => 50,
    maxRetriesPerRequest: 1,
  });
  const warnings: string[] = [];
  const store = new RedisBreakerStore({
    redis,
    keyPrefix: prefix,
    instanceId,
    closeClient: true,
    operationTimeoutMs: 2_000,
    hydrateTimeoutMs: 2_000,
    logger: { warn: (m) => warnings.push(m), log: () => undefined },
  });
  opened.push(store);
  const breaker = new Breaker('payments', options.breaker ?? OPTIONS, {
    coordinator: store.coordinator,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const changes: StateChangeEvent[] = [];
  breaker.on('stateChange', (change) => changes.push(change));
  await store.hydrate([breaker]);
  return { store, breaker, warnings, changes };
}

const forcedOf = (r: Replica) => r.breaker.snapshot().forced;

describe.skipIf(!available)('fleet-wide orders through a real Redis', () => {
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
    prefix = `f${++prefixSeq}:`;
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('forces every replica, stores the order, and releases every replica', async () => {
    const [a, b, c] = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    const obeyed = [b, c].map((r) => nextTransition(r.breaker, (ch) => ch.reason === 'forced'));
    const write = await a.store.fleet.force(a.breaker, 'open', ORDER);
    // Obeyed here before the promise settles.
    expect(forcedOf(a)).toMatchObject({ state: 'open', ...ORDER });
    expect(write).toEqual({
      breaker: 'payments',
      generation: expect.any(Number),
      subscribers: 3,
    });
    for (const change of await Promise.all(obeyed))
      expect(change).toMatchObject({
        from: 'closed',
        to: 'isolated',
        forced: { state: 'open', ...ORDER },
      });
    expect(await admin.hgetall(`${prefix}{payments}:force`)).toEqual({
      state: 'open',
      reason: ORDER.reason,
      by: ORDER.by,
      until: '0',
      generation: String(write.generation),
      origin: 'a',
      at: expect.stringMatching(/^\d+$/),
    });
    // A force without an end never expires in Redis: a replica started next month starts forced.
    expect(await admin.pttl(`${prefix}{payments}:force`)).toBe(-1);
    const rejection = await b.breaker.execute(async () => 'never').catch((e: unknown) => e);
    expect(isCallRejected(rejection) && rejection.reason).toBe('isolated');
    // Each replica forced once: its own signal does not force the caller a second time.
    expect(a.changes.map((ch) => ch.reason)).toEqual(['forced']);

    const released = [b, c].map((r) => nextTransition(r.breaker, (ch) => ch.reason === 'released'));
    const release = await a.store.fleet.release(a.breaker);
    expect(release.generation).toBeGreaterThan(write.generation);
    await Promise.all(released);
    expect([a, b, c].map((r) => [r.breaker.state, forcedOf(r)])).toEqual([
      ['closed', undefined],
      ['closed', undefined],
      ['closed', undefined],
    ]);
    expect(await admin.hget(`${prefix}{payments}:force`, 'state')).toBe('released');
  });

  it("replaces a replica's own force with the fleet's, and a fleet release leaves a replica's own force alone", async () => {
    const [a, b, c] = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    b.breaker.force('disabled', { reason: 'b drains' });
    await a.store.fleet.force(a.breaker, 'closed', ORDER);
    // 'closed' is the alias of 'metrics-only': every replica reports the one name.
    await eventually('every replica forced metrics-only', () =>
      [a, b, c].every((r) => forcedOf(r)?.state === 'metrics-only') ? true : undefined,
    );
    // c forces itself open on its own after the fleet's force: the fleet's release must not end that.
    c.breaker.force('open', { reason: 'c is being drained' });
    const released = nextTransition(b.breaker, (ch) => ch.reason === 'released');
    await a.store.fleet.release(a.breaker);
    await released;
    await c.store.reconcile();
    expect([forcedOf(a), forcedOf(b), forcedOf(c)?.reason]).toEqual([
      undefined,
      undefined,
      'c is being drained',
    ]);
  });

  it('starts a new replica forced, and one started after untilMs unforced; the force ends everywhere at untilMs', async () => {
    const clock = new ManualClock(Date.now());
    const [a, b] = [await replica('a', prefix, { clock }), await replica('b', prefix, { clock })];
    // A fraction of a millisecond, as Date.now() + 1.5 * 40_001 gives: stored and ended exactly, never a Redis error.
    const untilMs = clock.now() + 60_001.5;
    await a.store.fleet.force(a.breaker, 'open', { ...ORDER, untilMs });
    await eventually('b forced', () => (forcedOf(b) === undefined ? undefined : true));
    const late = await replica('late', prefix, { clock });
    // Forced from its start, before any call or signal: hydration read the order.
    expect(late.changes).toEqual([
      expect.objectContaining({ reason: 'forced', forced: { state: 'open', ...ORDER } }),
    ]);
    expect(forcedOf(late)).toMatchObject({ state: 'open', until: untilMs });
    // Redis keeps the order a day past its end, so that it is known to be over, then forgets it.
    const ttl = await admin.pttl(`${prefix}{payments}:force`);
    expect(ttl).toBeGreaterThan(86_400_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000 + 60_002 + 1_000);
    expect(await admin.hget(`${prefix}{payments}:force`, 'until')).toBe(String(untilMs));

    // What Redis holds is what every replica holds: a reconcile changes nothing.
    await Promise.all([a, b, late].map((r) => r.store.reconcile()));
    expect([a, b, late].map((r) => forcedOf(r)?.until)).toEqual([untilMs, untilMs, untilMs]);

    clock.set(untilMs);
    // No timer: each replica ends it by itself when it next looks, dated when it was due.
    for (const r of [a, b, late]) {
      expect(r.breaker.state).toBe('closed');
      expect(r.changes.at(-1)).toMatchObject({ reason: 'released', at: untilMs });
    }
    const afterEnd = await replica('after', prefix, { clock });
    expect([afterEnd.changes, forcedOf(afterEnd)]).toEqual([[], undefined]);
  });

  it('repairs a missed order at the next reconcile, undoes a forged one, and writes again an order Redis lost', async () => {
    const [a, b] = [await replica('a', prefix), await replica('b', prefix)];
    const now = Date.now();
    // An order in Redis whose signal nobody heard.
    await admin.hset(`${prefix}{payments}:force`, {
      state: 'disabled',
      reason: 'missed',
      by: '',
      until: '0',
      generation: String(now),
      origin: 'elsewhere',
      at: String(now),
    });
    expect([forcedOf(a), forcedOf(b)]).toEqual([undefined, undefined]);
    await Promise.all([a.store.reconcile(), b.store.reconcile()]);
    expect([forcedOf(a)?.state, forcedOf(b)?.state]).toEqual(['disabled', 'disabled']);

    // A forged signal, newer than what Redis holds: obeyed at first, undone by the next read.
    await admin.publish(
      channelOf(prefix),
      JSON.stringify({
        v: 1,
        k: 'force',
        b: 'payments',
        f: 'open',
        r: 'forged',
        y: '',
        u: 0,
        g: now + 10,
        o: 'forger',
        a: now,
      }),
    );
    await eventually('the forged order heard', () =>
      forcedOf(a)?.reason === 'forged' && forcedOf(b)?.reason === 'forged' ? true : undefined,
    );
    await Promise.all([a.store.reconcile(), b.store.reconcile()]);
    expect([forcedOf(a), forcedOf(b)]).toMatchObject([
      { state: 'disabled', reason: 'missed' },
      { state: 'disabled', reason: 'missed' },
    ]);
    // Lost by Redis (a restart without persistence, deleted by hand): the replicas that hold it write it again.
    const forcings = (r: Replica) =>
      r.changes.filter((change) => change.reason === 'forced').length;
    const before = [forcings(a), forcings(b)];
    await admin.del(`${prefix}{payments}:force`);
    await Promise.all([a.store.reconcile(), b.store.reconcile()]);
    await eventually('the order written again', async () =>
      (await admin.hget(`${prefix}{payments}:force`, 'reason')) === 'missed' ? true : undefined,
    );
    expect([forcedOf(a)?.reason, forcedOf(b)?.reason]).toEqual(['missed', 'missed']);
    const late = await replica('late', prefix);
    expect(forcedOf(late)).toMatchObject({ state: 'disabled', reason: 'missed' });
    // The order written again is the one every replica holds: heard again, it changes nothing there.
    await eventually('the signals of the orders written again heard', async () => {
      await Promise.all([a.store.reconcile(), b.store.reconcile()]);
      return [forcings(a), forcings(b)];
    });
    expect([forcings(a), forcings(b)]).toEqual(before);
  });

  it('undoes a forged order at the next reconcile when Redis holds none, and never writes it for the fleet', async () => {
    const [a, b] = [await replica('a', prefix), await replica('b', prefix)];
    const now = Date.now();
    const forged = (k: 'force' | 'config') =>
      JSON.stringify({
        v: 1,
        k,
        b: 'payments',
        ...(k === 'force'
          ? { f: 'open', r: 'forged', y: '', u: 0 }
          : { p: JSON.stringify({ consecutiveFailures: 1 }) }),
        // An hour ahead: while it stood, it would hide every real order for an hour.
        g: now + 3_600_000,
        o: 'forger',
        a: now,
      });
    await admin.publish(channelOf(prefix), forged('force'));
    await admin.publish(channelOf(prefix), forged('config'));
    await eventually('the forged orders heard', () =>
      [a, b].every(
        (r) => forcedOf(r)?.reason === 'forged' && r.breaker.config.consecutiveFailures === 1,
      )
        ? true
        : undefined,
    );
    await Promise.all([a.store.reconcile(), b.store.reconcile()]);
    // Give a write that should not happen the time to land.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect([
      await admin.exists(`${prefix}{payments}:force`),
      await admin.exists(`${prefix}{payments}:config`),
    ]).toEqual([0, 0]);
    expect([forcedOf(a), forcedOf(b), a.breaker.state, b.breaker.state]).toEqual([
      undefined,
      undefined,
      'closed',
      'closed',
    ]);
    const late = await replica('late', prefix);
    expect([forcedOf(late), late.breaker.config.consecutiveFailures]).toEqual([undefined, 3]);
    // The next real order is obeyed at once, though its generation is older than the forged one.
    await a.store.fleet.force(a.breaker, 'disabled', ORDER);
    await eventually('b obeys the real order', () => forcedOf(b)?.reason, 1_000);
    expect(forcedOf(b)).toMatchObject({ state: 'disabled', ...ORDER });
  });

  it('forces a per-key family and the children it holds on every replica, and refuses a child', async () => {
    const family: BreakerOptions = { ...OPTIONS, perKey: { maxKeys: 10 } };
    const [a, b] = [
      await replica('a', prefix, { breaker: family }),
      await replica('b', prefix, { breaker: family }),
    ];
    const child = b.breaker.forKey('eu-west');
    await a.store.fleet.force(a.breaker, 'disabled', ORDER);
    await eventually('b forced', () => (forcedOf(b) === undefined ? undefined : true));
    expect([b.breaker.state, child.state, child.snapshot().forced?.reason]).toEqual([
      'disabled',
      'disabled',
      ORDER.reason,
    ]);
    await expect(a.store.fleet.force(a.breaker.forKey('x'), 'open', ORDER)).rejects.toThrow(
      /^Circuit breaker "payments\[x\]" is not shared through this store/,
    );
  });

  it('fails clearly to the caller when Redis is down, and the replica still obeys', async () => {
    const gone = await RedisServer.start();
    const port = gone.port;
    const a = await replica('a', prefix, { port });
    await gone.kill();
    await eventually('the outage seen', () => (a.store.shared ? undefined : true));
    const error = await a.store.fleet.force(a.breaker, 'open', ORDER).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FleetOrderError);
    expect(error).toMatchObject({
      name: 'FleetOrderError',
      breaker: 'payments',
      order: 'force',
      message:
        'Circuit breaker "payments" is forced open on this replica only: the other replicas were not told, because Redis is unreachable. ' +
        'Give the order again once Redis is reachable (the store logs "Redis is reachable again"); replicas that miss an order are not told later.',
    });
    expect(forcedOf(a)).toMatchObject({ state: 'open', ...ORDER });
    const release = await a.store.fleet.release(a.breaker).catch((e: unknown) => e);
    expect((release as Error).message).toMatch(
      /^Circuit breaker "payments" is released on this replica only: the other replicas were not told, because Redis is unreachable\./,
    );
    expect(forcedOf(a)).toBeUndefined();
  });

  it('refuses what cannot reach the fleet before anything changes', async () => {
    const a = await replica('a', prefix);
    const local = new Breaker('local', OPTIONS);
    await expect(a.store.fleet.force(local, 'open', ORDER)).rejects.toThrow(
      'Circuit breaker "local" is not shared through this store (share: false, or a child of a per-key family), so an order cannot reach the other replicas: order it on each replica without { fleet: true }, or remove share: false.',
    );
    expect(local.snapshot().forced).toBeUndefined();
    await expect(a.store.fleet.force(a.breaker, 'open', { reason: '' })).rejects.toBeInstanceOf(
      TypeError,
    );
    expect(forcedOf(a)).toBeUndefined();
    await expect(
      a.store.fleet.reconfigure(a.breaker, {
        classifyError: () => true,
      } as unknown as BreakerOptions),
    ).rejects.toThrow(
      'Circuit breaker "payments": option "classifyError" cannot travel to the other replicas (a function): a fleet-wide reconfiguration carries plain data only',
    );
    expect(a.breaker.config.timeoutMs).toBe(5_000);
    expect(await admin.exists(`${prefix}{payments}:force`, `${prefix}{payments}:config`)).toBe(0);
    // After shutdown: refused, and nothing changes here either.
    await a.store.close();
    await expect(a.store.fleet.force(a.breaker, 'open', ORDER)).rejects.toThrow(
      'Circuit breaker "payments": the store is closed (the application is shutting down), so the fleet-wide force changed nothing, here or elsewhere. Give it to a replica that is running.',
    );
    expect(forcedOf(a)).toBeUndefined();
  });

  it('applies what a read finds when the read went out in the millisecond an order was heard', async () => {
    const [a, b] = [await replica('a', prefix), await replica('b', prefix)];
    // One millisecond for all of it: the order heard, then the read sent. Ordered by time, the read looked
    // older than the order, and the record it found was dropped until a later read in another millisecond.
    const frozen = Date.now();
    const now = vi.spyOn(Date, 'now').mockReturnValue(frozen);
    try {
      await a.store.fleet.reconfigure(a.breaker, { ...OPTIONS, timeoutMs: 2_000 });
      await eventually('b reconfigured', () =>
        b.breaker.config.timeoutMs === 2_000 ? true : undefined,
      );
      const newer = { ...OPTIONS, timeoutMs: 3_000 };
      await admin.hset(
        `${prefix}{payments}:config`,
        'patch',
        JSON.stringify(newer),
        'generation',
        frozen + 1_000,
      );
      await b.store.reconcile();
      expect(b.breaker.config.timeoutMs).toBe(3_000);
    } finally {
      now.mockRestore();
    }
  });

  it('reconfigures every replica, and a replica started later, and says where a replica refuses', async () => {
    const [a, b] = [await replica('a', prefix), await replica('b', prefix)];
    // c applies patches over its own definition (as the module does), which cannot take this one:
    // a count window of 10 is below its minimumThroughput of 20.
    const cOwn: BreakerOptions = { ...OPTIONS, minimumThroughput: 20 };
    const c = await replica('c', prefix, { breaker: cOwn });
    c.store.fleet.useReconfigurer({
      apply: (breaker, patch) => breaker.reconfigure({ ...cOwn, ...patch }),
      merge: (previous, patch) => ({ ...previous, ...patch }),
    });
    const next = { ...OPTIONS, timeoutMs: 2_000, window: { type: 'count' as const, size: 10 } };
    const heard = eventually('b reconfigured', () =>
      b.breaker.config.timeoutMs === 2_000 ? true : undefined,
    );
    const result = await a.store.fleet.reconfigure(a.breaker, next);
    expect(result).toMatchObject({
      previous: { timeoutMs: 5_000 },
      current: { timeoutMs: 2_000 },
      reset: ['window'],
      fleet: { breaker: 'payments', generation: expect.any(Number), subscribers: 3 },
    });
    await heard;
    expect(a.breaker.config.timeoutMs).toBe(2_000);
    await eventually('c refused', () => (c.warnings.length > 0 ? true : undefined));
    expect(c.breaker.config.timeoutMs).toBe(5_000);
    expect(c.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Circuit breaker "payments": this replica cannot apply the fleet's reconfiguration \\(generation ${result.fleet.generation}, from "a"\\) and keeps its options: .*minimumThroughput`,
        ),
      ),
    ]);
    await eventually('the refusal stored', async () =>
      (await admin.hget(`${prefix}{payments}:config`, 'refused:c')) === c.warnings[0]
        ? true
        : undefined,
    );
    const late = await replica('late', prefix);
    expect(late.breaker.config).toMatchObject({ timeoutMs: 2_000 });
    expect(JSON.parse((await admin.hget(`${prefix}{payments}:config`, 'patch'))!)).toEqual(next);
    // Lost by Redis: written again by the replicas that applied it, for the replicas that start later.
    await admin.del(`${prefix}{payments}:config`);
    await Promise.all([a, b, c, late].map((r) => r.store.reconcile()));
    await eventually('the reconfiguration written again', async () =>
      (await admin.hget(`${prefix}{payments}:config`, 'patch')) === JSON.stringify(next)
        ? true
        : undefined,
    );
    expect((await replica('later', prefix)).breaker.config.timeoutMs).toBe(2_000);
  });
});
