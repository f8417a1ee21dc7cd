import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './helpers/fleet.js';
import { redisServerAvailable } from './helpers/redis-server.js';

// Scenario 5: a replica that restarts during an outage reads the shared state
// before it serves, so it starts open instead of re-learning the outage with
// failed calls.

const available = redisServerAvailable();

describe.skipIf(!available)('scenario 5: a replica restarted during an outage starts open', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({
      ids: ['a', 'b', 'c'],
      breakers: { upstream: { consecutiveFailures: 3, openDurationMs: 60_000 } },
    });
  }, 30_000);
  afterAll(() => fleet?.close());

  it("is open from its first moment, until the fleet's time, and never calls the upstream", async () => {
    const [a, b, c] = fleet.replicas as [
      (typeof fleet.replicas)[0],
      (typeof fleet.replicas)[0],
      (typeof fleet.replicas)[0],
    ];
    fleet.upstream.mode = 'fail';
    await a.burst('upstream', 3);
    await b.burst('upstream', 3);
    const adopted = await c.transition((t) => t.reason === 'shared-open');

    await c.kill(); // a crash: nothing written on the way out
    const restarted = await fleet.startReplica('c');
    // The snapshot taken right after start-up, before any call.
    expect(restarted.readySnapshots.upstream).toMatchObject({
      state: 'open',
      openUntil: adopted.openUntil,
      coordination: { shared: true, storeErrors: 0 },
    });
    expect(restarted.transitions).toEqual([]);
    const hitsBefore = fleet.upstream.totalHits;
    expect(await restarted.burst('upstream', 10)).toEqual({ 'rejected:open': 10 });
    expect(fleet.upstream.totalHits).toBe(hitsBefore);
  });
});
