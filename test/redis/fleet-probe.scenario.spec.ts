import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './helpers/fleet.js';
import type { ReplicaTransition } from './helpers/replica-process.js';
import { redisServerAvailable } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';

// Scenario 3: recovery. When the fleet's open period ends, three replicas take
// 1,000 concurrent calls each, and exactly one of those 3,000 calls reaches
// the upstream: the probe of the replica that holds the fleet's probe permit.
// Its success closes every replica.

const available = redisServerAvailable();
const CALLS = 1_000;

describe.skipIf(!available)('scenario 3: one probe for the fleet', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({
      ids: ['a', 'b', 'c'],
      breakers: {
        upstream: {
          consecutiveFailures: 3,
          openDurationMs: 1_500,
          halfOpen: { maxWaitMs: 10_000 },
        },
      },
    });
  }, 30_000);
  afterAll(() => fleet?.close());

  it(`admits exactly one of ${3 * CALLS} concurrent calls, and its verdict closes every replica`, async () => {
    const { upstream, admin, replicas } = fleet;
    const [a, b, c] = replicas as [
      (typeof replicas)[0],
      (typeof replicas)[0],
      (typeof replicas)[0],
    ];
    upstream.mode = 'fail';
    await a.burst('upstream', 3);
    await b.burst('upstream', 3);
    await c.transition((t) => t.reason === 'shared-open');
    const failedCalls = upstream.totalHits;

    // The upstream has recovered, but holds its answers: the probe stays in flight while the other calls arrive.
    upstream.mode = 'hold';
    // The permit is taken when the open period ends, by one replica, before any call asks for it.
    await eventually(
      'the fleet probe permit',
      async () => (await admin.get('shop:{upstream}:probe')) ?? undefined,
      10_000,
    );

    // Which replica probes is read from the results, not from Redis: the permit read above is a claim of one second, and
    // a stall of this process longer than that lets it lapse and go to another replica before the calls arrive. Should the
    // calls then land in the moment of the hand-over, when no replica holds the permit yet, every call is rejected and no
    // probe is made: the burst is repeated (at most twice), and the upstream must still see exactly one probe in all.
    const rounds: Record<string, number>[][] = [];
    let tallies: Record<string, number>[] | undefined;
    let closed: Promise<ReplicaTransition>[] = [];
    while (tallies === undefined && rounds.length < 3) {
      const issued = replicas.map((r) => r.issued('upstream'));
      let settled: Record<string, number>[] | undefined;
      const bursts = Promise.all(replicas.map((r) => r.burst('upstream', CALLS))).then(
        (t) => (settled = t),
      );
      await Promise.all(issued);
      await eventually('the probe reaching the upstream, or every call rejected', () =>
        upstream.totalHits > failedCalls || settled !== undefined ? true : undefined,
      );
      if (upstream.totalHits > failedCalls) {
        closed = replicas.map((r) => r.transition((t) => t.to === 'closed'));
        upstream.release();
        tallies = await bursts;
      } else {
        rounds.push(await bursts);
      }
    }
    // A round without a probe rejected every call as open.
    for (const round of rounds)
      expect(round).toEqual(replicas.map(() => ({ 'rejected:open': CALLS })));
    expect(tallies).toBeDefined();

    // Exactly one probe fleet-wide: one replica admitted one call, and every other call was rejected.
    expect(upstream.totalHits - failedCalls).toBe(1);
    const holders = replicas.filter((_, i) => tallies![i]!.ok === 1);
    expect(holders).toHaveLength(1);
    const holder = holders[0]!.id;
    for (const [i, tally] of tallies!.entries()) {
      expect(tally).toEqual(
        replicas[i]!.id === holder
          ? { ok: 1, 'rejected:half-open-busy': CALLS - 1 }
          : { 'rejected:open': CALLS },
      );
    }

    // The holder's verdict closes it, and every other replica adopts it.
    const reasons = (await Promise.all(closed)).map((t) => t.reason);
    expect(reasons).toEqual(
      replicas.map((r) => (r.id === holder ? 'probes-succeeded' : 'shared-close')),
    );
    upstream.mode = 'ok';
    expect(await Promise.all(replicas.map((r) => r.burst('upstream', 10)))).toEqual([
      { ok: 10 },
      { ok: 10 },
      { ok: 10 },
    ]);
    expect(await admin.exists('shop:{upstream}:probe')).toBe(0);
  });
});
