// Section 2 of bench/LIMIT-RESULTS.md: offered load from 0.5x to 4x capacity,
// 20% critical and 80% sheddable, through each limit algorithm with a range
// of queues (maxQueue, queueTimeoutMs), beside the best fixed limit found by
// search and no limit. Targets (issue 30, Cinnamon's figures): critical
// goodput at least 95% of the critical offered up to 4x; total goodput at
// capacity.

import { panelsChart } from '../chart.mjs';
import { fixed } from '../summary.mjs';
import { windowFigures } from './figures.mjs';
import { CAPACITY, MIX_LOADS, mix } from './scenarios.mjs';
import { simulateLimit } from './simulate.mjs';
import { FIXED_SEARCH } from './steps.mjs';

/** The queues tried: none, then each bound with each deadline. */
export const QUEUE_SIZES = [2, 4, 8, 16, 32];
export const QUEUE_TIMEOUTS_MS = [100, 125, 250, 1000];

/** `[{ maxQueue, queueTimeoutMs? }]`: no queue, then every size with every deadline. */
export function queueSettings(sizes = QUEUE_SIZES, timeouts = QUEUE_TIMEOUTS_MS) {
  return [
    { maxQueue: 0 },
    ...sizes.flatMap((maxQueue) =>
      timeouts.map((queueTimeoutMs) => ({ maxQueue, queueTimeoutMs })),
    ),
  ];
}

/** The figures of one row at every load, from 10 s after the load began. */
export async function mixFigures(row, seed, loads = MIX_LOADS) {
  const out = [];
  for (const load of loads) {
    const scenario = mix({ load });
    const f = windowFigures(
      await simulateLimit(scenario, row, { seed }),
      scenario.phases[1].atMs + 10_000,
      scenario.durationMs,
    );
    out.push({
      load,
      criticalPct: f.critical.goodputPct,
      goodput: f.goodput,
      criticalP99Ms: f.critical.p99Ms,
      meanLimit: f.meanLimit,
    });
  }
  return out;
}

/** Whether a row meets both targets: >= 95% critical goodput at every load, >= 90% of capacity from 1x. */
export function meetsTargets(figures) {
  return (
    figures.every((f) => f.criticalPct >= 95) &&
    figures.filter((f) => f.load >= 1).every((f) => f.goodput >= 0.9 * CAPACITY)
  );
}

/** A score to rank rows: the worst critical goodput, then total goodput above capacity. */
export function mixScore(figures) {
  const worstCritical = Math.min(...figures.map((f) => f.criticalPct));
  const overloaded = figures.filter((f) => f.load >= 1);
  const goodput = overloaded.reduce((t, f) => t + f.goodput, 0) / overloaded.length;
  return Math.min(95, worstCritical) * 1000 + goodput;
}

/** The best fixed limit for the mix with `queue` (ranked by `mixScore`). */
export async function searchFixedMix(fixedRow, queue, seed) {
  let best;
  for (const limit of FIXED_SEARCH) {
    const figures = await mixFigures(fixedRow(limit, queue), seed);
    const score = mixScore(figures);
    if (best === undefined || score > best.score) best = { limit, score, figures };
  }
  return best;
}

const pct = (v) => (Number.isNaN(v) ? '–' : fixed(v, 1));
const ms = (v) => (Number.isFinite(v) ? fixed(v) : '∞');

/** Three tables, a row per entry of `measured` (`{ label, figures }`) and a column per load. */
export function mixTables(measured) {
  const head = `| row | ${MIX_LOADS.map((l) => `${l}x`).join(' | ')} | targets |`;
  const rule = `| :--- | ${MIX_LOADS.map(() => '---:').join(' | ')} | :--- |`;
  const table = (title, cell) => [
    '',
    title,
    '',
    head,
    rule,
    ...measured.map(
      (m) =>
        `| ${m.label} | ${m.figures.map(cell).join(' | ')} | ${meetsTargets(m.figures) ? 'met' : '–'} |`,
    ),
  ];
  return [
    ...table('Critical goodput, % of the critical requests offered (target: at least 95):', (f) =>
      pct(f.criticalPct),
    ),
    ...table(
      `Total goodput, requests/s answered within 1 s (capacity ${CAPACITY}; target: at capacity from 1x):`,
      (f) => fixed(f.goodput, 1),
    ),
    ...table('p99 latency of the critical requests served, ms:', (f) => ms(f.criticalP99Ms)),
    ...table('The mean limit (a queue of `maxQueue` is that many times this):', (f) =>
      Number.isNaN(f.meanLimit) ? '–' : fixed(f.meanLimit, 1),
    ),
  ];
}

/** Critical and total goodput against the offered load, a line per entry of `measured`. */
export function mixChart(measured) {
  return panelsChart(
    'Criticality mix: 20% critical, 80% sheddable',
    measured.map((m) => m.label),
    [
      {
        title: 'critical goodput: % of the critical requests offered',
        max: 100,
        lines: measured.map((m) => m.figures.map((f) => f.criticalPct)),
      },
      {
        title: 'total goodput: requests/s answered within 1 s',
        max: 150,
        lines: measured.map((m) => m.figures.map((f) => f.goodput)),
      },
    ],
    { every: 1, text: (i) => `${MIX_LOADS[i]}x` },
  );
}
