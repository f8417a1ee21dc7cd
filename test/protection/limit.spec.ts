import { describe, expect, it } from 'vitest';
import { unloadedP99 } from '../../bench/protection/limit/benchmark.mjs';
import {
  limitSlopePerMinute,
  stallFigures,
  stepFigures,
  windowFigures,
} from '../../bench/protection/limit/figures.mjs';
import { mixFigures } from '../../bench/protection/limit/mix.mjs';
import { limiterRow, noLimit } from '../../bench/protection/limit/rows.mjs';
import * as scenarios from '../../bench/protection/limit/scenarios.mjs';
import { simulateLimit } from '../../bench/protection/limit/simulate.mjs';
import { tierFigures } from '../../bench/protection/limit/tiers.mjs';
import * as core from '../../lib/core/index.js';

// The limit benchmark's scenarios (bench/protection/limit/, issue 30), seeded,
// through this package's ConcurrencyLimiter: its figures are held to bounds
// just above (or below) today's figure, in the comment, so that a change that
// makes the limiter shed more, serve later or collapse fails here. The
// side-by-side run is `npm run bench:limit` (bench/LIMIT-RESULTS.md).
// Virtual time: each test is a few hundred ms of CPU for minutes of traffic.

const row = (options: object) => limiterRow(core, 'under test', 'under test', options);
// No queue unless a test gives one: what each algorithm does alone.
const NO_QUEUE = { maxQueue: 0 };
const aimd = row({ algorithm: 'aimd', ...NO_QUEUE });
const gradient = (queue: object = NO_QUEUE) => row({ algorithm: 'gradient', ...queue });
const fixed = (limit: number, queue: object = NO_QUEUE) =>
  row({ algorithm: 'fixed', initialLimit: limit, ...queue });
const seed = { seed: 1 };

describe('limit: the ConcurrencyLimiter in front of the server of Netflix Example.java (virtual time, seed 1)', () => {
  it('the server: 100 requests/s of capacity, and a p99 of 132 ms alone at 10 rps', async () => {
    expect(scenarios.CAPACITY).toBe(100);
    // LogNormal(3, 1) scaled to a 20 ms mean: its own p99 is 124 ms, plus a little queueing.
    expect(await unloadedP99(1)).toBeCloseTo(131.66, 1);
    const idle = await simulateLimit(scenarios.unloaded({ durationMs: 60_000 }), noLimit, seed);
    expect(windowFigures(idle, 0, 60_000).shedPct).toBe(0);
  });

  it('1. step load: fixed 12 (the search’s best) keeps p99 within 2x unloaded at every step', async () => {
    const steps = stepFigures(await simulateLimit(scenarios.stepLoad(), fixed(12), seed), 2);
    expect(steps.map((s) => s.meanLimit)).toEqual([12, 12, 12, 12]);
    // 161, 226, 253 and 239 ms against 2 x 132
    for (const s of steps) expect(s.p99Ms).toBeLessThanOrEqual(2 * 131.66);
    expect(steps[2]!.goodput).toBeGreaterThanOrEqual(100); // 102.2/s at 200 rps, 49.5% shed
    expect(steps[3]!.goodput).toBeGreaterThanOrEqual(85); // 87.8/s at 100 rps, 10.2% shed
  });

  it('1. step load: gradient settles near the true limit within 10 s of each overload and keeps p99 at 1x unloaded', async () => {
    const steps = stepFigures(await simulateLimit(scenarios.stepLoad(), gradient(), seed), 2);
    const [, at90, at200, at100] = steps;
    // Settled within 20% of 2: 4 s after the step to 200 rps, 11 s after the one to 100 rps (5 s while every
    // window slower by noise restarted growth: without a queue, a limit of 3 is slower by less than a window's
    // noise, and the limit sits at 2.6 there).
    expect(at200!.settleMs).toBeLessThanOrEqual(10_000);
    expect(at100!.settleMs).toBeLessThanOrEqual(11_000);
    expect(at200!.meanLimit).toBeLessThanOrEqual(2.4); // 2.19
    expect(at200!.p99Ms).toBeLessThanOrEqual(2 * 131.66); // 123 ms: 0.93x unloaded
    // The price of a limit of 2 with no queue on a heavy-tailed server: 34% shed at 0.9x.
    expect(at90!.shedPct).toBeLessThanOrEqual(36); // 34.0
    expect(at200!.goodput).toBeGreaterThanOrEqual(78); // 80.6/s
  });

  it('1. step load: gradient with maxQueue 8 (100 ms) serves 2x at capacity within 2x unloaded p99', async () => {
    const queued = gradient({ maxQueue: 8, queueTimeoutMs: 100 });
    const [, at90, at200] = stepFigures(await simulateLimit(scenarios.stepLoad(), queued, seed), 2);
    expect(at200!.p99Ms).toBeLessThanOrEqual(2 * 131.66); // 185 ms: 1.41x
    expect(at200!.goodput).toBeGreaterThanOrEqual(100); // 102.1/s
    expect(at90!.shedPct).toBeLessThanOrEqual(9); // 7.4%
  });

  it('1. step load: aimd sheds half at 2x, once its queue nears the client timeout', async () => {
    const steps = stepFigures(await simulateLimit(scenarios.stepLoad(), aimd, seed), 2);
    // It hears overload only from drops (answers later than the client timeout), not from
    // latency: its limit climbs to 75 at 200 rps and p99 reaches 8x unloaded (issue 30's target,
    // 2x, is the gradient limit's).
    expect(steps[2]!.shedPct).toBeGreaterThanOrEqual(45); // 49.6%
    expect(steps[2]!.goodput).toBeGreaterThanOrEqual(95); // 98.5/s
    expect(steps[2]!.p99Ms).toBeLessThanOrEqual(1_200); // 1,081 ms
    expect(steps[3]!.goodput).toBeGreaterThanOrEqual(94); // 96.3/s
  });

  it('1. drift: 10 minutes at 1.2x; a fixed limit stays put, aimd creeps about 0.1 a minute', async () => {
    const flat = await simulateLimit(scenarios.drift(), fixed(12), seed);
    expect(limitSlopePerMinute(flat, 60_000)).toBe(0);
    const creeping = await simulateLimit(scenarios.drift(), aimd, seed);
    expect(limitSlopePerMinute(creeping, 60_000)).toBeLessThanOrEqual(0.15); // 0.104 a minute
    expect(windowFigures(creeping, 60_000, 600_000).goodput).toBeGreaterThanOrEqual(95); // 97.5/s
  });

  it('1. drift: 10 minutes at 1.2x; the gradient limit does not creep up', async () => {
    const result = await simulateLimit(scenarios.drift(), gradient(), seed);
    expect(limitSlopePerMinute(result, 60_000)).toBeLessThanOrEqual(0.05); // -0.147 a minute
    expect(windowFigures(result, 540_000, 600_000).meanLimit).toBeLessThanOrEqual(2.4); // 1.73
  });

  it('1. stall: 500 ms of pause under 0.9x does not take the limit to its floor', async () => {
    for (const limiter of [aimd, gradient()]) {
      const f = stallFigures(await simulateLimit(scenarios.stall(), limiter, seed), 60_000, 500);
      // aimd 48 before and after; gradient 3.3 before, 3 after: never out of 20% of where it was.
      expect(f.minAfter).toBeGreaterThanOrEqual(0.8 * f.before);
      expect(f.backMs).toBe(0);
    }
  });

  it('2. criticality mix: fixed 2 with a queue of 32 (1 s) keeps critical goodput near 100% to 4x', async () => {
    const figures = await mixFigures(fixed(2, { maxQueue: 32, queueTimeoutMs: 1_000 }), 1);
    // 100 at every load but 4x: 99.8
    for (const f of figures) expect(f.criticalPct).toBeGreaterThanOrEqual(99.5);
    // 95.6 at 1x, then 97.0 to 97.5 (the server's own noise: a 50 s sample of a heavy tail)
    for (const f of figures.filter((each) => each.load >= 1))
      expect(f.goodput).toBeGreaterThanOrEqual(95);
    expect(Math.max(...figures.map((f) => f.criticalP99Ms))).toBeLessThanOrEqual(380); // 343 ms at 4x
  });

  it('2. criticality mix: gradient with maxQueue 32 (250 ms) meets both targets to 4x', async () => {
    const figures = await mixFigures(gradient({ maxQueue: 32, queueTimeoutMs: 250 }), 1);
    // 100 at every load but 4x: 99.3
    for (const f of figures) expect(f.criticalPct).toBeGreaterThanOrEqual(98);
    // 94.0 at 1x, then 97.7 to 97.9
    for (const f of figures.filter((each) => each.load >= 1))
      expect(f.goodput).toBeGreaterThanOrEqual(92);
    expect(Math.max(...figures.map((f) => f.criticalP99Ms))).toBeLessThanOrEqual(300); // 269 ms at 4x
  });

  it('2. criticality mix: without a queue, criticality cannot help (aimd, fixed 8)', async () => {
    const bare = await mixFigures(fixed(8), 1);
    // Shed in proportion: 23.7% of the critical requests served at 4x, total goodput at capacity.
    expect(bare.at(-1)!.criticalPct).toBeGreaterThanOrEqual(22);
    expect(bare.at(-1)!.goodput).toBeGreaterThanOrEqual(95); // 97.6
    const adaptive = await mixFigures(aimd, 1);
    expect(adaptive.at(-1)!.criticalPct).toBeGreaterThanOrEqual(23); // 25.3%
    expect(adaptive.at(-1)!.goodput).toBeGreaterThanOrEqual(95); // 97.1/s
    expect(adaptive.at(-1)!.criticalP99Ms).toBeLessThanOrEqual(1_100); // 1,015 ms: the server's queue
  });

  it('4. two tiers, the retry storm: a callee limiter at the dependency’s 20 recovers at once with the caller’s breaker', async () => {
    const limits = [
      { text: 'fixed 20', options: { algorithm: 'fixed', initialLimit: 20, ...NO_QUEUE } },
    ];
    const [both, callee, caller, neither] = await tierFigures(core, limits, 1, 30_000);
    expect(both!.figures.recoverMs).toBe(0); // the caller alone: 2.25 s
    expect(callee!.figures.recoverMs).toBe(0);
    expect(caller!.figures.recoverMs).toBeLessThanOrEqual(2_500); // 2.25 s
    expect(neither!.figures.recoverMs).toBeUndefined(); // naive retries alone: never
  });

  it('4. two tiers, the retry storm: a shed answer that asks for no pause recovers first, with more goodput than the first answer’s Retry-After', async () => {
    const limits = [
      { text: 'defaults', options: {}, bothOnly: true },
      { text: 'Retry-After 1 s', options: {}, retryAfterMs: 1_000, bothOnly: true },
      { text: 'queued', options: { maxQueue: 32, queueTimeoutMs: 250 }, bothOnly: true },
    ];
    const [plain, paused, queued] = await tierFigures(core, limits, 1, 30_000);
    // 503 + circuit-breaker-code LOAD_SHED, counted as overload by the caller: 10 s (19.75 s while every
    // window slower by noise restarted the limit's growth from its smallest step).
    expect(plain!.figures.recoverMs).toBeLessThanOrEqual(10_000);
    // Each shed 503 + Retry-After 1 s paused the whole caller: 10.5 s, and 61.5 goodput/s against 81.9.
    expect(paused!.figures.recoverMs).toBeGreaterThan(plain!.figures.recoverMs!);
    expect(paused!.figures.goodput).toBeLessThan(plain!.figures.goodput - 15);
    expect(queued!.figures.recoverMs).toBeLessThanOrEqual(2_500); // 2 s (the caller alone: 2.25 s)
  });
});
