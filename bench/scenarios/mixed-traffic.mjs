// Scenario 3: mixed traffic. Every tenth call fails, well below every trip rule
// (ours: 50 % over the window; consecutive breakers: 5 in a row), so no breaker
// opens and the cost is that of recording outcomes. Then the growth of that cost
// with the number of calls the window holds: 2,000 versus 10,000.

import { performance } from 'node:perf_hooks';
import {
  compileBatch,
  median,
  ratioRows,
  runInterleaved,
  seededRandom,
  tick,
} from '../harness.mjs';
import { Breaker, implementations, isClosed, OpossumBreaker } from '../implementations.mjs';

const FAILURE = new Error('dependency failed');

/** A dependency of its own per implementation: calls 1-9 resolve, call 10 rejects, and again. */
function flaky() {
  let k = 0;
  const dep = () => {
    if (dep.warming || ++k !== 10) return Promise.resolve(1);
    k = 0;
    return Promise.reject(FAILURE);
  };
  dep.warming = false;
  return dep;
}

// opossum recomputes its window statistics, sorting every latency the window
// holds, on each failure: with percentiles on, the cost of a failure grows with
// the calls in the last 10 s. At a benchmark's call rate that is seconds per
// batch, so the side-by-side rows turn percentiles off and the growth of
// opossum's defaults is measured on its own below.
const OPOSSUM_MIXED = { rollingPercentilesEnabled: false };

const ENTRIES = [
  { id: 'raw' },
  { id: 'minimal' },
  { id: 'ours' },
  {
    id: 'opossumNoTimeout',
    options: OPOSSUM_MIXED,
    label: 'opossum (timeout: false, percentiles off)',
  },
  { id: 'opossumDefaults', options: OPOSSUM_MIXED, label: 'opossum (defaults, percentiles off)' },
  { id: 'cockatielConsecutive' },
  { id: 'cockatielCount' },
  {
    id: 'ours2k',
    impl: 'ours',
    options: { window: { type: 'count', size: 2_000 } },
    label: 'ours, count window 2,000',
  },
  {
    id: 'ours10k',
    impl: 'ours',
    options: { window: { type: 'count', size: 10_000 } },
    label: 'ours, count window 10,000',
  },
  {
    id: 'cockatielCount2k',
    impl: 'cockatielCount',
    options: 2_000,
    label: 'cockatiel Count(2,000)',
  },
  {
    id: 'cockatielCount10k',
    impl: 'cockatielCount',
    options: 10_000,
    label: 'cockatiel Count(10,000)',
  },
];

export const GROWTH_PAIRS = [
  { label: 'ours', large: 'ours10k', small: 'ours2k', note: 'count window of 10,000 vs 2,000' },
  {
    label: 'cockatiel Count',
    large: 'cockatielCount10k',
    small: 'cockatielCount2k',
    note: 'CountBreaker size 10,000 vs 2,000',
  },
];

export async function mixedTraffic({ batchSize, rounds, warmupRounds, seed }) {
  if (batchSize % 10 !== 0)
    throw new Error('mixed traffic needs a batch size that is a multiple of 10');
  if (batchSize * warmupRounds < 10_000)
    throw new Error('the warm-up must fill a window of 10,000');
  const entries = ENTRIES.map((spec) => {
    const impl = implementations[spec.impl ?? spec.id];
    const dep = flaky();
    const target = impl.create(dep, spec.options);
    return {
      id: spec.id,
      label: spec.label ?? impl.label,
      impl,
      target,
      ...compileBatch('mixed', impl.call, target, dep),
    };
  });
  const result = await runInterleaved(entries, { batchSize, rounds, warmupRounds, seed });
  const problems = entries
    .filter((e) => !isClosed(e.target))
    .map((e) => `${e.label} opened during mixed traffic`);
  for (const e of entries) {
    if (e.target instanceof Breaker && e.target.snapshot().totals.rejected.total !== 0)
      problems.push(`${e.label} rejected calls during mixed traffic`);
    e.impl.dispose?.(e.target);
  }
  return {
    title: 'Mixed traffic',
    description: '1 call in 10 fails, below every trip threshold',
    batchSize,
    rounds,
    rows: ratioRows(entries, result),
    growth: GROWTH_PAIRS.map((p) => ({ ...p, ratio: result.ratio(p.large, p.small) })),
    problems,
  };
}

/**
 * opossum with its defaults (percentiles on): the cost per call of mixed traffic
 * when its window already holds 2,000 or 10,000 calls. Fresh breakers each
 * round, filled with successes, then `calls` mixed calls timed.
 */
export async function opossumWindowGrowth({ rounds, calls = 200, seed = 7 }) {
  const random = seededRandom(seed);
  const fills = [2_000, 10_000];
  const ns = { 2_000: [], 10_000: [] };
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const order = random() < 0.5 ? fills : fills.toReversed();
    const round = {};
    for (const fill of order) {
      const dep = flaky();
      const breaker = new OpossumBreaker(dep, {});
      dep.warming = true;
      for (let i = 0; i < fill; i++) await breaker.fire();
      dep.warming = false;
      globalThis.gc?.();
      await tick();
      let s = 0;
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) {
        try {
          s += await breaker.fire();
        } catch {
          s--;
        }
      }
      const t1 = performance.now();
      if (s !== (calls / 10) * 8 || !breaker.closed)
        throw new Error('opossum window growth: unexpected outcomes');
      breaker.shutdown();
      round[fill] = ((t1 - t0) * 1e6) / calls;
      ns[fill].push(round[fill]);
      await tick();
    }
    ratios.push(round[10_000] / round[2_000]);
  }
  return {
    label: 'opossum (defaults, percentiles on)',
    note: `${calls} mixed calls after the window was filled with 2,000 or 10,000 successes`,
    nsPerCall2k: median(ns[2_000]),
    nsPerCall10k: median(ns[10_000]),
    ratio: median(ratios),
    rounds,
  };
}
