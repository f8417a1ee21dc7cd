import { describe, expect, it } from 'vitest';
import { oursImplementations } from '../../bench/protection/ours.mjs';
import * as scenarios from '../../bench/protection/scenarios.mjs';
import { simulate, type Figures, type Scenario } from '../../bench/protection/simulate.mjs';
import * as core from '../../lib/core/index.js';

// The protection benchmark's scenarios (bench/protection/), shortened and
// seeded, through this package's engine: what it protects is held to bounds,
// so that a change that lets more calls reach a dead dependency, detects or
// recovers later fails here. Each bound sits just above today's figure (in
// the comment); the side-by-side run with the peers is `npm run bench:protection`.
// Virtual time: a few seconds of CPU for minutes of traffic at 100 calls/s.

const ours = oursImplementations(core);
const noBreaker = {
  name: 'none',
  label: 'no breaker',
  make: () => ({ call: (fn: (signal?: AbortSignal) => Promise<unknown>) => fn(undefined) }),
};

const run = (scenario: Scenario, implementation = ours.ours): Promise<Figures> =>
  simulate(scenario, implementation, { seed: 1 });

describe('protection: this package against a failing dependency (virtual time, seed 1)', () => {
  it('1. a hard outage of 45 s and of 65 s (two phases of the open period): detected within 0.2 s, recovered within one open period', async () => {
    for (const lengthMs of [45_000, 65_000]) {
      const figures = await run(scenarios.hardOutage(lengthMs, 35_000));
      // 49 ms: 4 refused connections in a row after a clean window trip it (6 failures in a row of any
      // kind: 66 ms; in-flight calls resetting the streak: 127 ms; 10 in a row: 151 ms; previous defaults: 424 ms).
      expect(figures.detectMs).toBeLessThanOrEqual(60);
      // 8 and 10 (a sudden streak of 6: 10 and 12; in-flight calls resetting the streak: 16 and 18; previous defaults: 51)
      expect(figures.wasted).toBeLessThanOrEqual(11);
      expect(figures.peakInFlight).toBeLessThanOrEqual(25); // 15 and 17
      // 5.25 s for both: the open period ends 10 s after the trip, then every 10 s (previous defaults: 15.5 and 25.5 s).
      expect(figures.recoverMs).toBeLessThanOrEqual(11_000);
    }
  });

  it('2a. a hung dependency, the client timeout aborting the call: detected within 1.5 s', async () => {
    const figures = await run(scenarios.hung('abort', 30_000, 15_000));
    // 1.05 s: 4 client timeouts in a row after a clean window (previous defaults: 1.41 s)
    expect(figures.detectMs).toBeLessThanOrEqual(1_200);
    expect(figures.wasted).toBeLessThanOrEqual(125); // 119 (a sudden streak of 6: 123; previous defaults: 150)
    expect(figures.waitingS).toBeLessThanOrEqual(125); // 119 s of callers' time
    // 3.25 s (previous defaults: 1.5 s, its 30 s open period in phase with this 30 s incident; swept, C recovers sooner).
    expect(figures.recoverMs).toBeLessThanOrEqual(11_000);
  });

  it('2b. a hung dependency the caller only stops waiting on: the 2 s default deadline bounds what piles up', async () => {
    const figures = await run(scenarios.hung('race', 30_000, 15_000));
    expect(figures.detectMs).toBeLessThanOrEqual(2_500); // 2.06 s: the deadline (previous defaults: 10.41 s)
    expect(figures.peakInFlight).toBeLessThanOrEqual(230); // 202 (previous defaults: 1,022)
  });

  it('3. a brownout of 30% failures never trips it: goodput and waste equal no breaker', async () => {
    const scenario = scenarios.brownout(60_000, 10_000);
    const [figures, bare] = [await run(scenario), await run(scenario, noBreaker)];
    expect(figures.detectMs).toBeUndefined();
    expect(figures.goodput).toBe(bare.goodput); // 75.1 calls/s
    expect(figures.wasted).toBe(bare.wasted);
  });

  it('4. a dependency ten times slower (its queue collapses): detected within 2 s', async () => {
    const figures = await run(scenarios.slow(30_000, 15_000));
    expect(figures.detectMs).toBeLessThanOrEqual(2_000); // 1.29 s (previous defaults: 1.73 s)
    // 329: a 10 s open period probes the slow dependency three times as often (previous defaults: 138; the sweep
    // of bench/PROTECTION-RESULTS.md, "Candidate defaults": 286 against 602, the price of recovering sooner).
    expect(figures.wasted).toBeLessThanOrEqual(400);
  });

  it('5. back at 10% capacity: the slow start keeps it from being flooded again', async () => {
    const scenario = scenarios.reducedCapacity(30_000, 45_000);
    const plain = await run(scenario);
    const ramped = await run(scenario, ours.oursRampUp);
    expect(plain.recoverMs).toBeLessThanOrEqual(5_000); // 4 s (previous defaults, in phase: 2 s)
    expect(ramped.peakInFlight).toBeLessThanOrEqual(30); // 22, where the defaults reach 110
    expect(ramped.wasted).toBeLessThanOrEqual(60); // 55 (a sudden streak of 6: 65; previous defaults: 94)
  });

  it('6. a retry storm: with withRetry and its budget the dependency gets out of it', async () => {
    const figures = await run(scenarios.retryStorm(30_000), ours.oursRetry);
    // 0.86; naive retries without a breaker 2.65. (previous defaults: 0.58, its 30 s open period turning more callers away.)
    expect(figures.amplification).toBeLessThanOrEqual(0.9);
    expect(figures.recoverMs).toBeLessThanOrEqual(2_500); // 2.25 s (previous defaults: 22.75 s); without a breaker, never
  });

  it('7. 429 + Retry-After: honoured at once, about fifteen calls wasted', async () => {
    const figures = await run(scenarios.overloaded(30_000, 15_000));
    expect(figures.detectMs).toBeLessThanOrEqual(300); // 253 ms
    expect(figures.wasted).toBeLessThanOrEqual(20); // 15
    expect(figures.recoverMs).toBeLessThanOrEqual(2_000); // 1.5 s
  });

  it('8. one bad host of five: the balancer routes past a host whose breaker rejects (simulator, exact)', async () => {
    const scenario = scenarios.badHost(30_000, 10_000);
    const bare = await run(scenario, noBreaker);
    // A request lands on a host at random: about a fifth of them on the bad host, 40% of those fail.
    expect([bare.requests, bare.wasted]).toEqual([7_108, 249]);
    // A breaker that turns every call to host 0 away at once: every request is served by another host.
    const skipsHost0 = {
      ...noBreaker,
      makeKeyed: () => ({
        call: (fn: (signal?: AbortSignal) => Promise<unknown>, key: number) =>
          key === 0 ? Promise.reject(new Error('rejected at once')) : fn(undefined),
      }),
    };
    const routed = await run(scenario, skipsHost0);
    expect(routed.wasted).toBe(0);
    expect(routed.series.successes.reduce((a, b) => a + b, 0)).toBe(routed.requests);
  });

  it('8. one bad host of five at 40% failures: the 50% rate rule of a per-key child does not eject it in 30 s', async () => {
    const figures = await run(scenarios.badHost(30_000, 10_000), ours.oursPerKey);
    // 249, the same as no breaker; cockatiel's ConsecutiveBreaker(5) wastes 122 (it trips on streaks of 5).
    expect(figures.wasted).toBeLessThanOrEqual(260);
    expect(figures.goodput).toBeGreaterThanOrEqual(94.5); // 94.9 calls/s
  });

  it('9. a fleet of 10 replicas: shared state wastes fewer calls and recovers sooner than 10 local breakers', async () => {
    const scenario = scenarios.fleetOutage(45_000, 30_000);
    const [alone, shared] = [await run(scenario), await run(scenario, ours.oursShared)];
    // 29, where 10 local breakers waste 80 (a sudden streak of 6: 46 and 100; 10 in a row: 74 and 140)
    expect(shared.wasted).toBeLessThanOrEqual(35);
    expect(shared.wasted).toBeLessThan(alone.wasted);
    // 0.16 s: the first replica's 4 refused connections in a row after a clean window (6 in a row: 0.21 s;
    // previous defaults: 3.53 s, 10 calls/s per replica filling a window).
    expect(shared.detectMs).toBeLessThanOrEqual(200);
    expect(shared.recoverMs).toBeLessThanOrEqual(6_000); // 5.5 s, 10 local breakers 6.25 s
    expect(shared.recoverMs).toBeLessThan(alone.recoverMs!);
  });
});
