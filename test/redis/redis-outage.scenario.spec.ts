import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from './helpers/fleet.js';
import type { ReplicaProcess } from './helpers/replica-process.js';
import { QUORUM_LINE } from './helpers/log-lines.js';
import { redisServerAvailable } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';

// Scenario 4: Redis dies in the middle of traffic. Callers never see a Redis
// error, every breaker keeps deciding locally, snapshots say shared: false,
// and when Redis is back (empty: a fresh server) sharing resumes by itself,
// without restarting a replica.

const available = redisServerAvailable();
const UNREACHABLE =
  /^Redis is unreachable \(.+\): every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back\.$/;
const RESUMED =
  /^Redis is reachable again after \d+ ms: circuit breakers share their state again\.$/;

/**
 * Checks a replica's log as a sequence of outages: a warning opens each and a
 * recovery line closes it, so two warnings never follow each other (one
 * warning per outage). A replica stalled longer than operationTimeoutMs on a
 * busy machine may add a whole outage of its own: that is allowed. Returns how
 * many lines there are.
 */
/** What a replica logged but its start-up line of quorums. */
const outageLines = (replica: ReplicaProcess) =>
  replica.logs.filter((line) => !QUORUM_LINE.test(line.message));

function expectOutages(replica: ReplicaProcess): number {
  for (const [i, line] of outageLines(replica).entries()) {
    expect(line).toEqual(
      i % 2 === 0
        ? { level: 'warn', message: expect.stringMatching(UNREACHABLE) }
        : { level: 'log', message: expect.stringMatching(RESUMED) },
    );
  }
  return outageLines(replica).length;
}

const sharedEverywhere = (replicas: ReplicaProcess[], shared: boolean) =>
  eventually(
    `every replica reporting shared: ${shared}`,
    async () => {
      const snapshots = await Promise.all(replicas.map((r) => r.snapshot('upstream')));
      return snapshots.every((s) => s.coordination?.shared === shared) ? snapshots : undefined;
    },
    10_000,
    20,
  );

describe.skipIf(!available)('scenario 4: Redis killed mid-traffic, then restarted', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({
      ids: ['a', 'b', 'c'],
      // A quorum of two, fixed: this scenario kills Redis within a second of the fleet's start, when a replica may not
      // have counted all three yet, so what 'auto' comes to depends on timing. How 'auto' keeps the size counted before
      // an outage is quorum-auto.scenario.spec.ts's (and replica-count.spec.ts's, on a manual clock).
      breakers: {
        // No deadline: the calls held across Redis' death wait as long as a busy machine takes to kill it.
        upstream: {
          consecutiveFailures: 3,
          openDurationMs: 60_000,
          timeoutMs: false,
          share: { quorum: 2 },
        },
      },
      // A deadline a busy machine's event-loop stalls stay well within, so that the only outage is the one the test makes.
      store: { operationTimeoutMs: 1_000, reconcileIntervalMs: 500 },
    });
  }, 30_000);
  afterAll(() => fleet?.close());

  it('keeps every breaker working locally with no Redis error reaching a caller, and resumes sharing on its own', async () => {
    const { upstream, server, admin, replicas } = fleet;
    const [a, b, c] = replicas as [ReplicaProcess, ReplicaProcess, ReplicaProcess];
    const outcomes: Record<string, number>[] = [];

    // Mid-traffic: 200 calls per replica in flight when Redis dies.
    upstream.mode = 'hold';
    const issued = replicas.map((r) => r.issued('upstream'));
    const inFlight = replicas.map((r) => r.burst('upstream', 200));
    await Promise.all(issued);
    await eventually('every call in flight at the upstream', () =>
      upstream.totalHits === 600 ? true : undefined,
    );
    await server.kill();
    const down = await sharedEverywhere(replicas, false);
    upstream.release();
    outcomes.push(...(await Promise.all(inFlight)));
    expect(outcomes).toEqual([{ ok: 200 }, { ok: 200 }, { ok: 200 }]);

    // Local breaking goes on: a opens on its own failures; b, with fewer, stays closed; nothing is shared.
    upstream.mode = 'fail';
    outcomes.push(
      await a.burst('upstream', 3),
      await a.burst('upstream', 5),
      await b.burst('upstream', 2),
      await c.burst('upstream', 1),
    );
    expect(outcomes.slice(3)).toEqual([
      { 'upstream-error': 3 },
      { 'rejected:open': 5 },
      { 'upstream-error': 2 },
      { 'upstream-error': 1 },
    ]);
    const aDown = await a.snapshot('upstream');
    expect(aDown).toMatchObject({ state: 'open', coordination: { shared: false } });
    expect(aDown.coordination!.storeErrors).toBeGreaterThan(0);
    expect(down.map((s) => s.state)).toEqual(['closed', 'closed', 'closed']);
    // Each replica is in an outage, and said so once.
    const linesWhenDown = replicas.map((r) => expectOutages(r));
    for (const r of replicas) expect(outageLines(r).at(-1)?.level).toBe('warn');

    // Redis is back, empty. Nobody restarts: the replicas reconnect, and a tells the fleet again that it is open.
    await server.restart();
    await sharedEverywhere(replicas, true);
    await eventually("a's report written again", async () =>
      (await admin.zrange('shop:{upstream}:opens', 0, '-1')).join() === 'a' ? true : undefined,
    );
    // ... and the outage ended with one recovery line.
    for (const [i, r] of replicas.entries()) {
      expectOutages(r);
      expect(outageLines(r)[linesWhenDown[i]!]).toEqual({
        level: 'log',
        message: expect.stringMatching(RESUMED),
      });
    }

    // Sharing works again: b's third failure makes the quorum with a's replayed report, and c adopts.
    outcomes.push(await b.burst('upstream', 1));
    expect(outcomes.at(-1)).toEqual({ 'upstream-error': 1 });
    const adopted = await c.transition((t) => t.reason === 'shared-open');
    expect(adopted.openUntil).toBe((await b.snapshot('upstream')).openUntil);
    outcomes.push(await c.burst('upstream', 4));
    expect(outcomes.at(-1)).toEqual({ 'rejected:open': 4 });

    // Not one call, in the whole scenario, ended with anything but the upstream's answer or a breaker's rejection.
    const seen = new Set(outcomes.flatMap((tally) => Object.keys(tally)));
    expect([...seen].filter((outcome) => outcome.startsWith('other:'))).toEqual([]);
  });
});
