// Interleaved batches and medians of per-round ratios.
//
// A machine's absolute speed swings (2x between minutes is common on shared
// hardware); the ratio of two implementations measured side by side, a few
// milliseconds apart, does not. So every round runs one batch of every
// implementation in a freshly shuffled order, the ratio to the baseline is taken
// within the round, and the median over all rounds is reported.

import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';

/** What one batch loop does with each call's outcome; `expect` checks the batch's sum (and keeps the work observable). */
const BATCH_KINDS = {
  // Every call resolves with 1.
  value: {
    body: (call) => `let s = 0; for (let i = 0; i < n; i++) s += await ${call}; return s;`,
    expect: (n) => n,
  },
  // Every call rejects.
  reject: {
    body: (call) =>
      `let s = 0; for (let i = 0; i < n; i++) { try { await ${call}; } catch (e) { if (e !== undefined) s++; } } return s;`,
    expect: (n) => n,
  },
  // Nine calls in ten resolve with 1, every tenth rejects.
  mixed: {
    body: (call) =>
      `let s = 0; for (let i = 0; i < n; i++) { try { s += await ${call}; } catch (e) { if (e !== undefined) s--; } } return s;`,
    expect: (n) => (n / 10) * 8,
  },
};

/**
 * Compiles one batch loop for one implementation. Each loop is its own function
 * (its own inline caches and optimized code), so no implementation runs in a
 * call site made polymorphic by the others.
 */
export function compileBatch(kind, call, target, dep) {
  const { body, expect } = BATCH_KINDS[kind];
  const factory = new Function(
    'target',
    'dep',
    `return async function batch(n) { ${body(call)} };`,
  );
  const batch = factory(target, dep);
  return { batch, expect };
}

export const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A small seeded generator, so that a run's batch orders can be reproduced. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled(items, random) {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = values.toSorted((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export const median = (values) => quantile(values, 0.5);

/** Median and quartiles of a list of numbers. */
export function summarize(values) {
  return {
    median: median(values),
    p25: quantile(values, 0.25),
    p75: quantile(values, 0.75),
    n: values.length,
  };
}

async function runChecked(entry, n) {
  const sum = await entry.batch(n);
  const expected = entry.expect(n);
  if (sum !== expected)
    throw new Error(`${entry.id}: a batch of ${n} summed to ${sum}, expected ${expected}`);
}

/**
 * Runs `entries` ({ id, batch, expect }) in interleaved rounds.
 *
 * Every round starts with a forced full GC unless `gcBetweenRounds` is false.
 * (A full GC also deoptimizes optimized code that embeds objects that have died
 * since, so code that keeps such objects, rxjs's subscribe chain for one, runs
 * partly unoptimized for a while after each; the steady-state rows of scenario 7
 * are measured without it to show the difference.)
 *
 * Returns, per id, the ns/call of every round and their summary, and a
 * `ratio(a, b)` that summarizes the per-round ratios time(a) / time(b).
 */
export async function runInterleaved(
  entries,
  { batchSize, rounds, warmupRounds, seed = 1, gcBetweenRounds = true },
) {
  const random = seededRandom(seed);
  for (let w = 0; w < warmupRounds; w++) {
    for (const entry of shuffled(entries, random)) {
      await runChecked(entry, batchSize);
      await tick();
    }
  }
  const perRound = Object.fromEntries(entries.map((e) => [e.id, []]));
  for (let r = 0; r < rounds; r++) {
    // A clean heap at the start of each round; the shuffled order spreads what is left over.
    if (gcBetweenRounds) globalThis.gc?.();
    await tick();
    for (const entry of shuffled(entries, random)) {
      const t0 = performance.now();
      await runChecked(entry, batchSize);
      const t1 = performance.now();
      perRound[entry.id].push(((t1 - t0) * 1e6) / batchSize);
      // Let timers (opossum's bucket rotation, for one) run between batches, not inside them.
      await tick();
    }
  }
  const nsPerCall = Object.fromEntries(
    Object.entries(perRound).map(([id, v]) => [id, summarize(v)]),
  );
  const ratio = (a, b) => summarize(perRound[a].map((t, i) => t / perRound[b][i]));
  return { nsPerCall, ratio, perRound };
}

/** One row per implementation: its median ns per call and its median ratio to `minimal`. */
export function ratioRows(entries, result) {
  return entries.map((e) => ({
    id: e.id,
    label: e.label,
    nsPerCall: result.nsPerCall[e.id],
    ratioToMinimal: result.ratio(e.id, 'minimal'),
  }));
}

/**
 * Runs a scenario module in a child process of its own (`node --expose-gc
 * <file> '<options as JSON>'`), so that its calls do not shape the optimized
 * code the other scenarios measure; the module prints its result as the last
 * line of JSON.
 */
export async function runInChild(file, options) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', file, JSON.stringify(options)],
    { maxBuffer: 1 << 22 },
  );
  return JSON.parse(stdout.trim().split('\n').pop());
}
