// The deadline path against the same path without a deadline, side by side in
// one process, and why scenario 1b of `npm run bench` reads far more (issue 26).
//
//   npm run build && node bench/deadline-harness.mjs [--runs 6] [--rounds 40] [--batch 5000]
//
// Each run is a fresh child process in one of three modes, alternated run by run:
//
//   steady   no forced GC between rounds (what a service sees between its rare full GCs)
//   gc       a forced full GC before each round, as `bench/harness.mjs` does (scenario 1b)
//   gc+live  the same, with one deadline call left pending across every GC
//
// In a child, every round times one batch of each of `minimal`, `ours`
// (`timeoutMs: false`) and `ours (defaults)` (the default deadline, 2 s) in a shuffled order;
// the ratios are taken within the round, and their median over the rounds is the
// run's figure. The driver prints every run's figure and the median over the
// runs of each mode: only ratios, since the machine's absolute speed swings.
//
// With BENCH_BASELINE naming a built checkout, a fourth loop runs its
// `new Breaker(name)` (the default deadline) in the same rounds, and the driver
// adds the ratio of this build's deadline path to the baseline's.
//
// Each batch loop is compiled by a `new Function` of its own, so that no
// implementation runs in a call site made polymorphic by the others.

import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { median, seededRandom, tick } from './harness.mjs';
import { Breaker, MinimalBreaker } from './implementations.mjs';

const SELF = fileURLToPath(import.meta.url);
const MODES = (process.env.MODES ?? 'steady,gc,gc+live').split(',');

const VARIANTS = {
  minimal: () => new MinimalBreaker(),
  ours: () => new Breaker('harness-plain', { timeoutMs: false }),
  deadline: () => new Breaker('harness-deadline'),
};

function compile(id, target, dep) {
  const source = `/* ${id} */ return async function batch(n) { let s = 0; for (let i = 0; i < n; i++) s += await target.execute(dep); return s; };`;
  return new Function('target', 'dep', source)(target, dep);
}

async function child({ mode, rounds, batch, seed }) {
  const dep = () => Promise.resolve(1);
  const variants = { ...VARIANTS };
  const baseline = process.env.BENCH_BASELINE;
  if (baseline) {
    const url = pathToFileURL(resolve(baseline, 'dist/core/index.js')).href;
    const { Breaker: BaselineBreaker } = await import(url);
    variants.baseline = () => new BaselineBreaker('harness-baseline');
  }
  const entries = Object.entries(variants).map(([id, create]) => {
    const target = create();
    return { id, target, run: compile(id, target, dep) };
  });
  // A call that never settles: one deadline call is alive at every GC, as in a service under traffic.
  if (mode === 'gc+live')
    for (const e of entries.slice(2)) e.target.execute(() => new Promise(() => {})).catch(() => {});
  const random = seededRandom(seed);
  const times = Object.fromEntries(entries.map((e) => [e.id, []]));
  for (let r = -3; r < rounds; r++) {
    if (mode !== 'steady') globalThis.gc();
    await tick();
    const order = entries.slice();
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const e of order) {
      const t0 = performance.now();
      const sum = await e.run(batch);
      const t1 = performance.now();
      if (sum !== batch) throw new Error(`${e.id}: ${sum} of ${batch}`);
      if (r >= 0) times[e.id].push(((t1 - t0) * 1e6) / batch);
      await tick();
    }
  }
  const ratio = (a, b) => median(times[a].map((t, i) => t / times[b][i]));
  return {
    mode,
    deadlineToOurs: ratio('deadline', 'ours'),
    deadlineToMinimal: ratio('deadline', 'minimal'),
    oursToMinimal: ratio('ours', 'minimal'),
    deadlineNs: median(times.deadline),
    ...(baseline ? { deadlineToBaseline: ratio('deadline', 'baseline') } : {}),
  };
}

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

function baselineColumn(result) {
  return result.deadlineToBaseline === undefined
    ? ''
    : `  deadline/baseline ${result.deadlineToBaseline.toFixed(2)}x`;
}

async function driver() {
  const runs = option('runs', 6);
  const rounds = option('rounds', 40);
  const batch = option('batch', 5_000);
  const byMode = Object.fromEntries(MODES.map((m) => [m, []]));
  const fmt = (x) => `${x.toFixed(2)}x`;
  for (let run = 0; run < runs; run++) {
    for (const mode of run % 2 === 0 ? MODES : MODES.toReversed()) {
      const options = JSON.stringify({ mode, rounds, batch, seed: 7 + run });
      const { stdout } = await promisify(execFile)(process.execPath, [
        '--expose-gc',
        SELF,
        options,
      ]);
      const result = JSON.parse(stdout);
      byMode[mode].push(result);
      console.log(
        `run ${run} ${mode.padEnd(8)} deadline/ours ${fmt(result.deadlineToOurs)}  deadline/minimal ${fmt(result.deadlineToMinimal)}  ours/minimal ${fmt(result.oursToMinimal)}${baselineColumn(result)}  (deadline ${result.deadlineNs.toFixed(0)} ns)`,
      );
    }
  }
  console.log('\nmedian over the runs:');
  for (const mode of MODES) {
    const pick = (key) => fmt(median(byMode[mode].map((r) => r[key])));
    const base = process.env.BENCH_BASELINE
      ? `  deadline/baseline ${pick('deadlineToBaseline')}`
      : '';
    console.log(
      `${mode.padEnd(8)} deadline/ours ${pick('deadlineToOurs')}  deadline/minimal ${pick('deadlineToMinimal')}  ours/minimal ${pick('oursToMinimal')}${base}`,
    );
  }
}

if (process.argv[2]?.startsWith('{')) {
  process.stdout.write(JSON.stringify(await child(JSON.parse(process.argv[2]))));
} else {
  await driver();
}
