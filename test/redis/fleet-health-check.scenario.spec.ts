import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BreakerOptions } from '../../lib/index.js';
import { type Fleet, startFleet } from './helpers/fleet.js';
import { redisServerAvailable } from './helpers/redis-server.js';

// Scenario 3b: recovery without traffic. The replicas open on a failing
// upstream (one replica's evidence is enough: quorum 1) and nobody calls them
// again; each has an active health check (every 300 ms,
// closing on success). Once the fleet is open, exactly one replica, the holder
// of the fleet's probe permit, checks the upstream's health, and its verdict
// closes every replica long before the open period (a minute) ends.
//
// (A replica that opened alone, before the fleet did, checks locally, as its
// live probes would: nobody waits for its verdict. Quorum 1 keeps that moment
// short, and the count starts once every replica knows the fleet is open.)

const available = redisServerAvailable();

describe.skipIf(!available)('scenario 3b: one health check for the fleet', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({
      ids: ['a', 'b', 'c'],
      breakers: {
        upstream: {
          consecutiveFailures: 3,
          openDurationMs: 60_000,
          share: { quorum: 1 },
          // The fixture gives the health check its `fn` (JSON cannot carry a function).
          healthCheck: {
            intervalMs: 300,
            onSuccess: 'closed',
          } as unknown as BreakerOptions['healthCheck'],
        },
      },
    });
  }, 30_000);
  afterAll(() => fleet?.close());

  it('one replica checks the health for the fleet, and its verdict closes every replica', async () => {
    const { upstream, admin, replicas } = fleet;
    const [a, b, c] = replicas as [
      (typeof replicas)[0],
      (typeof replicas)[0],
      (typeof replicas)[0],
    ];
    upstream.mode = 'fail';
    const adopted = [b, c].map((r) => r.transition((t) => t.reason === 'shared-open'));
    await a.burst('upstream', 3);
    await Promise.all(adopted);
    const before = new Map(upstream.hits);
    const closed = replicas.map((r) => r.transition((t) => t.to === 'closed'));
    // It recovers, and nobody calls.
    upstream.mode = 'ok';
    const transitions = await Promise.all(closed);

    // Every health check since the fleet opened came from one replica: the permit's holder.
    const checkers = [...upstream.hits]
      .filter(([who, n]) => who.endsWith(':health') && n > (before.get(who) ?? 0))
      .map(([who]) => who.replace(':health', ''));
    expect(checkers).toHaveLength(1);
    const holder = checkers[0]!;
    expect(transitions.map((t) => t.reason)).toEqual(
      replicas.map((r) => (r.id === holder ? 'health-check' : 'shared-close')),
    );
    // Long before the open period's end: no call and no timer of the open duration closed them.
    for (const t of transitions) expect(t.at - transitions[0]!.at).toBeLessThan(5_000);
    expect(await Promise.all(replicas.map((r) => r.burst('upstream', 5)))).toEqual([
      { ok: 5 },
      { ok: 5 },
      { ok: 5 },
    ]);
    expect(await admin.exists('shop:{upstream}:probe')).toBe(0);
  });
});
