// The limit benchmark of issue 30 (`npm run bench:limit`, ./run.mjs): every
// section through the ConcurrencyLimiter of the engine it is given, as
// Markdown lines and SVG charts.

import { windowFigures } from './figures.mjs';
import {
  mixChart,
  mixFigures,
  mixScore,
  meetsTargets,
  queueSettings,
  searchFixedMix,
} from './mix.mjs';
import { adaptiveAlgorithms, limiterRow, noLimit } from './rows.mjs';
import { unloaded } from './scenarios.mjs';
import { simulateLimit } from './simulate.mjs';
import {
  driftSection,
  queueSweepSection,
  searchFixedStep,
  stallSection,
  stepSection,
} from './steps.mjs';
import { tierFigures } from './tiers.mjs';

/** The server alone at 10 rps: the p99 the others are held to. */
export async function unloadedP99(seed) {
  const scenario = unloaded();
  return windowFigures(await simulateLimit(scenario, noLimit, { seed }), 0, scenario.durationMs)
    .p99Ms;
}

const queueText = (queue) =>
  queue.maxQueue === 0
    ? ', no queue'
    : `, maxQueue ${queue.maxQueue}, queueTimeoutMs ${queue.queueTimeoutMs}`;

/** The rows this engine can build: 'fixed' at a limit, and the adaptive algorithms it knows. */
export function rowsOf(core) {
  const fixedRow = (limit, queue = { maxQueue: 0 }) =>
    limiterRow(core, `fixed ${limit}${queueText(queue)}`, `fixed ${limit}${queueText(queue)}`, {
      algorithm: 'fixed',
      initialLimit: limit,
      ...queue,
    });
  const algorithms = adaptiveAlgorithms(core);
  const adaptive = (algorithm, queue = { maxQueue: 0 }) =>
    limiterRow(core, `${algorithm}${queueText(queue)}`, `${algorithm}${queueText(queue)}`, {
      algorithm,
      ...queue,
    });
  // The limiter as a user gets it: every option at its default.
  const { maxQueue, queueTimeoutMs } = core.LIMIT_DEFAULTS;
  const defaults = {
    ...adaptive(core.LIMIT_DEFAULTS.algorithm, { maxQueue, queueTimeoutMs }),
    label: `${core.LIMIT_DEFAULTS.algorithm}, defaults (maxQueue ${maxQueue}, queueTimeoutMs ${queueTimeoutMs})`,
  };
  return { fixedRow, algorithms, adaptive, defaults };
}

/** Sections 1 and 3: each algorithm with no queue and with the mix's best queue, the fixed limits of the searches, no limit. */
async function stepSections(rows, p99, seed, mixed) {
  const search = await searchFixedStep(rows.fixedRow, p99, seed);
  const best = mixed.best.queue;
  const list = [
    { ...rows.fixedRow(search.limit), label: `fixed ${search.limit} (best by search)` },
    rows.defaults,
    ...rows.algorithms.map((a) => rows.adaptive(a)),
    ...rows.algorithms.map((a) => rows.adaptive(a, best)),
    {
      ...rows.fixedRow(mixed.queuedFixed, best),
      label: `fixed ${mixed.queuedFixed}${queueText(best)} (best for the mix)`,
    },
    noLimit,
  ];
  const step = await stepSection(list, p99, seed);
  const drift = await driftSection(list, seed);
  const stall = await stallSection(list, seed);
  const sweep = await queueSweepSection(
    queueSettings([2, 4, 8, 16, 32], [100, 125, 250]).map((queue) =>
      rows.adaptive(rows.algorithms[0], queue),
    ),
    p99,
    seed,
  );
  return { search, list, step, drift, stall, sweep };
}

/**
 * The mix through every algorithm and queue, the fixed limit of the search (no queue, and with
 * the best queue of the default algorithm), and no limit. Returns the rows measured and the
 * recommended queue: the best-scoring setting of the default algorithm.
 */
async function mixSection(rows, seed) {
  const measured = [];
  const byAlgorithm = {};
  for (const algorithm of rows.algorithms) {
    for (const queue of queueSettings()) {
      const row = rows.adaptive(algorithm, queue);
      const figures = await mixFigures(row, seed);
      measured.push({ label: row.label, figures, queue, algorithm, score: mixScore(figures) });
    }
    byAlgorithm[algorithm] = measured.filter((m) => m.algorithm === algorithm);
  }
  const defaults = byAlgorithm[rows.algorithms[0]];
  const best = defaults.reduce((a, b) => (b.score > a.score ? b : a));
  const bare = await searchFixedMix(rows.fixedRow, { maxQueue: 0 }, seed);
  const queued = await searchFixedMix(rows.fixedRow, best.queue, seed);
  measured.push(
    { label: `fixed ${bare.limit} (best by search), no queue`, figures: bare.figures },
    {
      label: `fixed ${queued.limit} (best by search)${queueText(best.queue)}`,
      figures: queued.figures,
    },
    { label: 'no limit', figures: await mixFigures(noLimit, seed) },
  );
  const charted = [
    ...rows.algorithms.flatMap((a) => [
      byAlgorithm[a][0],
      byAlgorithm[a].find((m) => m.label === rows.adaptive(a, best.queue).label),
    ]),
    ...measured.slice(-3),
  ];
  return {
    measured,
    charted,
    best,
    queuedFixed: queued.limit,
    meeting: measured.filter((m) => meetsTargets(m.figures)),
  };
}

/** Every section's figures and table lines, and the charts by file name (./report.mjs writes the page). */
export async function limitBenchmark(core, { seed = 1, log = () => {} } = {}) {
  const rows = rowsOf(core);
  const p99 = await unloadedP99(seed);
  log('unloaded');
  const mixed = await mixSection(rows, seed);
  log('mix');
  const steps = await stepSections(rows, p99, seed, mixed);
  log('steps');
  const tierLimits = [
    {
      text: `limiter (${rows.algorithms[0]}, defaults)`,
      options: { algorithm: rows.algorithms[0] },
    },
    {
      text: `limiter (${rows.algorithms[0]}${queueText(mixed.best.queue)})`,
      options: { algorithm: rows.algorithms[0], ...mixed.best.queue },
    },
    {
      text: `limiter (${rows.algorithms[0]}, defaults), its 503 with Retry-After 1 s (the first answer)`,
      options: { algorithm: rows.algorithms[0] },
      retryAfterMs: 1_000,
      bothOnly: true,
    },
    {
      text: `limiter (${rows.algorithms[0]}, no queue)`,
      options: { algorithm: rows.algorithms[0], maxQueue: 0 },
      bothOnly: true,
    },
    // The dependency's own concurrency: the bulkhead someone who knew it would set.
    {
      text: 'limiter (fixed 20, no queue)',
      options: { algorithm: 'fixed', initialLimit: 20, maxQueue: 0 },
    },
  ];
  const tiers = await tierFigures(core, tierLimits, seed);
  log('tiers');
  return {
    algorithms: rows.algorithms,
    p99,
    steps,
    mixed,
    tiers,
    charts: {
      'limit-step-load.svg': steps.step.chart,
      'limit-drift.svg': steps.drift.chart,
      'limit-mix.svg': mixChart(mixed.charted),
    },
  };
}
