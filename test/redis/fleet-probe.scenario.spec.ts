import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './helpers/fleet.js';
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
      breakers: { upstream: { consecutiveFailures: 3, openDurationMs: 1_500, halfOpen: { maxWaitMs: 10_000 } } },
    });
  }, 30_000);
  afterAll(() => fleet?.close());

  it(`admits exactly one of ${3 * CALLS} concurrent calls, and its verdict closes every replica`, async () => {
    const { upstream, admin, replicas } = fleet;
    const [a, b, c] = replicas as [typeof replicas[0], typeof replicas[0], typeof replicas[0]];
    upstream.mode = 'fail';
    await a.burst('upstream', 3);
    await b.burst('upstream', 3);
    await c.transition((t) => t.reason === 'shared-open');
    const failedCalls = upstream.totalHits;

    // The upstream has recovered, but holds its answers: the probe stays in flight while the other calls arrive.
    upstream.mode = 'hold';
    // The permit is taken when the open period ends, by one replica, before any call asks for it.
    const holder = await eventually('the fleet probe permit', async () => (await admin.get('shop:{upstream}:probe')) ?? undefined, 10_000);
    expect(['a', 'b', 'c']).toContain(holder);

    const issued = replicas.map((r) => r.issued('upstream'));
    const bursts = replicas.map((r) => r.burst('upstream', CALLS));
    await Promise.all(issued);
    await eventually('the probe reaching the upstream', () => (upstream.totalHits === failedCalls + 1 ? true : undefined));
    const closed = replicas.map((r) => r.transition((t) => t.to === 'closed'));
    upstream.release();
    const tallies = await Promise.all(bursts);

    expect(upstream.totalHits - failedCalls).toBe(1);
    expect(tallies[['a', 'b', 'c'].indexOf(holder)]).toEqual({ ok: 1, 'rejected:half-open-busy': CALLS - 1 });
    for (const [i, tally] of tallies.entries()) if (replicas[i]!.id !== holder) expect(tally).toEqual({ 'rejected:open': CALLS });

    // The holder's verdict closes it, and every other replica adopts it.
    const reasons = (await Promise.all(closed)).map((t) => t.reason);
    expect(reasons).toEqual(replicas.map((r) => (r.id === holder ? 'probes-succeeded' : 'shared-close')));
    upstream.mode = 'ok';
    expect(await Promise.all(replicas.map((r) => r.burst('upstream', 10)))).toEqual([{ ok: 10 }, { ok: 10 }, { ok: 10 }]);
    expect(await admin.exists('shop:{upstream}:probe')).toBe(0);
  });
});
