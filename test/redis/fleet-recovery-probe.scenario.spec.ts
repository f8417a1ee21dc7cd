import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BreakerOptions } from '../../lib/index.js';
import { type Fleet, startFleet } from './helpers/fleet.js';
import { redisServerAvailable } from './helpers/redis-server.js';

// Scenario 3b: recovery without traffic. Three replicas open on a failing
// upstream and nobody calls them again; each has an active recovery probe
// (a health check every 200 ms, closing on success). Exactly one replica, the
// holder of the fleet's probe permit, checks the upstream's health, and its
// verdict closes every replica long before the open period (a minute) ends.

const available = redisServerAvailable();

describe.skipIf(!available)('scenario 3b: one recovery probe for the fleet', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({
      ids: ['a', 'b', 'c'],
      breakers: {
        upstream: {
          consecutiveFailures: 3,
          openDurationMs: 60_000,
          // The fixture gives the probe its health check (JSON cannot carry a function).
          probe: { intervalMs: 200, onSuccess: 'closed' } as unknown as BreakerOptions['probe'],
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
    await a.burst('upstream', 3);
    await b.burst('upstream', 3);
    await c.transition((t) => t.reason === 'shared-open');
    const closed = replicas.map((r) => r.transition((t) => t.to === 'closed'));
    // Health checks while it still fails keep the fleet open; then it recovers, and nobody calls.
    upstream.mode = 'ok';
    const transitions = await Promise.all(closed);

    const checks = [...upstream.hits].filter(([who]) => who.endsWith(':health'));
    // Every health check of the whole episode came from one replica: the permit's holder.
    expect(checks).toHaveLength(1);
    const holder = checks[0]![0].replace(':health', '');
    expect(transitions.map((t) => t.reason)).toEqual(
      replicas.map((r) => (r.id === holder ? 'recovery-probe' : 'shared-close')),
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
