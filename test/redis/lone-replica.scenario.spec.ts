import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './helpers/fleet.js';
import { redisServerAvailable } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';

// Scenario 2: one replica alone sees failures (its own network trouble, say).
// With quorum 2 its report opens nobody else: the others keep serving.

const available = redisServerAvailable();

describe.skipIf(!available)(
  'scenario 2: one replica alone cannot open the fleet (quorum 2)',
  () => {
    let fleet: Fleet;
    beforeAll(async () => {
      fleet = await startFleet({
        ids: ['a', 'b', 'c'],
        breakers: {
          upstream: { consecutiveFailures: 3, openDurationMs: 60_000, share: { quorum: 2 } },
        },
      });
    }, 30_000);
    afterAll(() => fleet?.close());

    it('opens the replica that saw the failures, and only it', async () => {
      const [a, b, c] = fleet.replicas as [
        (typeof fleet.replicas)[0],
        (typeof fleet.replicas)[0],
        (typeof fleet.replicas)[0],
      ];
      fleet.upstream.mode = 'fail';
      expect(await a.burst('upstream', 3)).toEqual({ 'upstream-error': 3 });
      expect((await a.snapshot('upstream')).state).toBe('open');
      // Its report is in Redis, one of the two needed; the fleet's state was never written.
      await eventually("a's report", async () =>
        (await fleet.admin.zrange('shop:{upstream}:opens', 0, '-1')).join() === 'a'
          ? true
          : undefined,
      );
      expect(await fleet.admin.exists('shop:{upstream}:state')).toBe(0);

      // The others read the shared state back (as the periodic reconcile does) and stay closed, serving.
      fleet.upstream.mode = 'ok';
      for (const replica of [b, c]) {
        await replica.reconcile();
        expect(await replica.burst('upstream', 5)).toEqual({ ok: 5 });
        expect(await replica.snapshot('upstream')).toMatchObject({
          state: 'closed',
          coordination: { shared: true, storeErrors: 0 },
        });
      }
      expect([b.transitions, c.transitions]).toEqual([[], []]);
      expect(await a.burst('upstream', 2)).toEqual({ 'rejected:open': 2 });
    });
  },
);
