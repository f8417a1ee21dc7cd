import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  REPLICA_TTL_INTERVALS,
  ReplicaRegistry,
} from '../../lib/redis/redis-breaker.fleet-view.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';

// What the quorum 'auto' counts after an outage: the replica back first lists
// alone until the others reconnect (ioredis waits up to 2 s between attempts),
// which a short reconcile interval outruns. The size counted before the gap is
// kept for REPLICA_TTL_INTERVALS intervals + RELIST_GRACE_MS on the replica's
// clock (a manual one here), then the count is what Redis lists.

const available = redisServerAvailable();
const INTERVAL_MS = 500;
// Three intervals of 500 ms, and RELIST_GRACE_MS (5 s).
const KEPT_MS = 6_500;

let server: RedisServer;
let redis: Redis;
let prefixSeq = 0;

interface Member {
  registry: ReplicaRegistry;
  store: { keyPrefix: string; instanceId: string; shared: boolean };
}

/** Three replicas' registries on one client, reporting only when the test says so, timed by `clock`. */
async function fleetOfThree(clock: ManualClock): Promise<[Member, Member, Member]> {
  const keyPrefix = `rc${++prefixSeq}:`;
  const members = ['a', 'b', 'c'].map((instanceId) => {
    const store = { keyPrefix, instanceId, shared: true };
    const registry = new ReplicaRegistry(
      store,
      { all: () => [] },
      { redis, reconcileIntervalMs: INTERVAL_MS, operationTimeoutMs: 5_000 },
      // Never ready: the first report is the test's too. Its connections work while the store shares.
      {
        whenReady: () => new Promise<void>(() => undefined),
        get shared() {
          return store.shared;
        },
      },
      () => clock.now(),
    );
    return { registry, store };
  }) as [Member, Member, Member];
  for (const m of members) await m.registry.report();
  await members[0].registry.report();
  expect(members.map((m) => m.registry.listed)).toEqual([3, 2, 3]);
  return members;
}

/** `n` reports of `member`: more than it remembers counts of. */
async function reports(member: Member, n = REPLICA_TTL_INTERVALS + 1): Promise<void> {
  for (let i = 0; i < n; i++) await member.registry.report();
}

describe.skipIf(!available)(
  "ReplicaRegistry.listed: the fleet size 'auto' counts, after an outage",
  () => {
    beforeAll(async () => {
      server = await RedisServer.start();
      redis = new Redis(server.port, '127.0.0.1', { retryStrategy: () => 50 });
      redis.on('error', () => undefined);
    });
    afterAll(async () => {
      redis?.disconnect();
      await server?.kill();
    });
    afterEach(async () => {
      await redis.flushall();
    });

    it('keeps the size counted before Redis came back empty until the others had the time to report again', async () => {
      const clock = new ManualClock();
      const [a] = await fleetOfThree(clock);
      await server.restart();
      await eventually('the client connected again', () =>
        redis.status === 'ready' ? true : undefined,
      );
      // a reports first, alone in a registry Redis lost: b and c have not reconnected yet.
      await reports(a);
      expect(await redis.zcard(`${a.store.keyPrefix}{~replicas}:seen`)).toBe(1);
      expect(a.registry.listed).toBe(3);
      clock.advance(KEPT_MS - 1);
      await a.registry.report();
      expect(a.registry.listed).toBe(3);
      // Time enough for any replica to reconnect and report: the fleet is what Redis lists.
      clock.advance(1);
      expect(a.registry.listed).toBe(1);
    });

    it('keeps it after reports missed while Redis was unreachable, the others’ listings having expired meanwhile', async () => {
      const clock = new ManualClock();
      const [a, b, c] = await fleetOfThree(clock);
      a.store.shared = false;
      await a.registry.report();
      a.store.shared = true;
      // b and c aged out during the outage; a's own listing is still there.
      await redis.zrem(`${a.store.keyPrefix}{~replicas}:seen`, 'b', 'c');
      await reports(a);
      expect(a.registry.listed).toBe(3);
      // b reports again, c never does: once the time is up, a counts two.
      await b.registry.report();
      await a.registry.report();
      clock.advance(KEPT_MS);
      expect([a.registry.listed, b.registry.listed]).toEqual([2, 2]);
      expect(
        await c.registry.read().then((view) => view.replicas.map((r) => r.instanceId)),
      ).toEqual(['a', 'b']);
    });

    it('counts a fleet that shrinks without a gap smaller once its replicas are gone, as before', async () => {
      const clock = new ManualClock();
      const [a, b, c] = await fleetOfThree(clock);
      await b.registry.leave();
      await c.registry.leave();
      await reports(a, REPLICA_TTL_INTERVALS - 1);
      expect(a.registry.listed).toBe(3);
      await a.registry.report();
      expect(a.registry.listed).toBe(1);
    });
  },
);

/** One step of a replica's life as its registry sees it: a report Redis answers, one skipped or failed, time passing. */
type Step =
  | { kind: 'answered'; listed: number; added: boolean }
  | { kind: 'skipped' }
  | { kind: 'failed' }
  | { kind: 'wait'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('answered' as const),
    listed: fc.integer({ min: 1, max: 6 }),
    added: fc.boolean(),
  }),
  fc.constant({ kind: 'skipped' as const }),
  fc.constant({ kind: 'failed' as const }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 4_000 }) }),
);

describe('ReplicaRegistry.listed over any sequence of reports, gaps and waits (no Redis: its answers are drawn)', () => {
  it('never counts fewer than before a gap until the time is up, and the most of the last three counts otherwise', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const clock = new ManualClock();
        const store = { keyPrefix: 'p:', instanceId: 'a', shared: true };
        let reply: Promise<unknown> = Promise.resolve([1, 1]);
        const fake = { eval: () => reply } as unknown as Redis;
        const registry = new ReplicaRegistry(
          store,
          { all: () => [] },
          { redis: fake, reconcileIntervalMs: INTERVAL_MS, operationTimeoutMs: 1_000 },
          {
            whenReady: () => new Promise<void>(() => undefined),
            get shared() {
              return store.shared;
            },
          },
          () => clock.now(),
        );
        // The model: the counts answered, and each gap's floor with its end.
        const counts: number[] = [];
        const floors: { size: number; until: number }[] = [];
        let gap = false;
        for (const s of steps) {
          if (s.kind === 'wait') clock.advance(s.ms);
          else if (s.kind === 'skipped') {
            store.shared = false;
            await registry.report();
            store.shared = true;
            gap = true;
          } else if (s.kind === 'failed') {
            reply = Promise.reject(new Error('drawn failure'));
            await registry.report();
            gap = true;
          } else {
            const before = registry.listed;
            reply = Promise.resolve([s.listed, s.added ? 1 : 0]);
            await registry.report();
            if ((gap || s.added) && before !== undefined)
              floors.push({ size: before, until: clock.now() + KEPT_MS });
            gap = false;
            counts.push(s.listed);
          }
          const last = counts.slice(-REPLICA_TTL_INTERVALS);
          const floor = Math.max(
            0,
            ...floors.filter((f) => clock.now() < f.until).map((f) => f.size),
          );
          expect(registry.listed).toBe(last.length === 0 ? undefined : Math.max(...last, floor));
        }
      }),
      { seed: 25_001, numRuns: 300 },
    );
  });
});
