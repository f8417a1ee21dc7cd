import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, percentiles, startFleet } from './helpers/fleet.js';
import { redisServerAvailable } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';

// Scenario 1: three replicas (separate processes) and an upstream that fails
// for all. Two replicas find it broken on their own; the third adopts the open
// state from them, within a bounded time, without a single failure of its own.

const available = redisServerAvailable();
const ROUNDS = 10;
// One breaker per round: every round is a fresh outage, with no state left over from the one before.
const breakers = Object.fromEntries(
  Array.from({ length: ROUNDS }, (_, i) => [
    `r${i}`,
    { consecutiveFailures: 3, openDurationMs: 60_000 },
  ]),
);

describe.skipIf(!available)('scenario 1: the third replica adopts an open found by two', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({ ids: ['a', 'b', 'c'], breakers });
  }, 30_000);
  afterAll(() => fleet?.close());

  it(`adopts within a bounded time, measured over ${ROUNDS} outages`, async () => {
    const [a, b, c] = fleet.replicas as [
      (typeof fleet.replicas)[0],
      (typeof fleet.replicas)[0],
      (typeof fleet.replicas)[0],
    ];
    fleet.upstream.mode = 'fail';
    const latencies: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const name = `r${i}`;
      expect(await a.burst(name, 3)).toEqual({ 'upstream-error': 3 });
      // a's report must be in Redis before b opens: then b's report is the one that makes the quorum.
      await eventually(`a's report of ${name}`, async () =>
        (await fleet.admin.zcard(`shop:{${name}}:opens`)) === 1 ? true : undefined,
      );
      expect(await b.burst(name, 3)).toEqual({ 'upstream-error': 3 });
      const quorum = await b.transition(
        (t) => t.breaker === name && t.reason === 'consecutive-failures',
      );
      const adopted = await c.transition((t) => t.breaker === name && t.to === 'open');
      expect(adopted).toMatchObject({
        from: 'closed',
        reason: 'shared-open',
        openUntil: quorum.openUntil,
      });
      latencies.push(adopted.at - quorum.at);
    }
    const { median, p99, max } = percentiles(latencies);
    console.log(
      `scenario 1: adoption latency across processes over ${ROUNDS} outages: median ${median} ms, p99 ${p99} ms, max ${max} ms (${latencies.join(', ')})`,
    );
    // Loopback and a few processes on one machine: milliseconds; the bound leaves room for a loaded CI machine.
    expect(max).toBeLessThan(1_000);

    // c rejects without ever having called the upstream.
    expect(await c.burst('r0', 5)).toEqual({ 'rejected:open': 5 });
    expect(fleet.upstream.hits.get('c')).toBeUndefined();
    expect(await c.snapshot('r0')).toMatchObject({
      state: 'open',
      coordination: { shared: true, storeErrors: 0 },
    });
  });
});
