// Sections 1 and 3 of bench/LIMIT-RESULTS.md: the Netflix step load, the
// drift at 1.2x and the stall, for each limit algorithm beside the best fixed
// limit found by search and no limit.

import { panelsChart } from '../chart.mjs';
import { fixed } from '../summary.mjs';
import {
  limitPerSecond,
  limitSlopePerMinute,
  stallFigures,
  stepFigures,
  windowFigures,
} from './figures.mjs';
import { noLimit } from './rows.mjs';
import { drift, stall, stepLoad, TRUE_LIMIT } from './scenarios.mjs';
import { OK, SHED, simulateLimit } from './simulate.mjs';

/** Fixed limits the search tries. */
export const FIXED_SEARCH = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20];

const ms = (value) => (Number.isFinite(value) ? fixed(value) : '∞');
const seconds = (value) => (value === undefined ? 'never' : fixed(value / 1000, 1));

/**
 * The best fixed limit on the step load: the most goodput over its steps among the limits whose
 * p99 stays within 2x the unloaded p99 at every step. Returns it and the search's table.
 */
export async function searchFixedStep(fixedRow, unloadedP99, seed) {
  const lines = [
    '| fixed limit | goodput/s at 50 / 90 / 200 / 100 rps | worst p99 ms | within 2x unloaded p99 |',
    '| ---: | ---: | ---: | :--- |',
  ];
  let best;
  for (const limit of FIXED_SEARCH) {
    const steps = stepFigures(await simulateLimit(stepLoad(), fixedRow(limit), { seed }), 2);
    const goodput = steps.reduce((total, s) => total + s.goodput, 0);
    const worst = Math.max(...steps.map((s) => s.p99Ms));
    const within = worst <= 2 * unloadedP99;
    if (within && (best === undefined || goodput > best.goodput)) best = { limit, goodput };
    lines.push(
      `| ${limit} | ${steps.map((s) => fixed(s.goodput, 1)).join(' / ')} | ${ms(worst)} | ${within ? 'yes' : 'no'} |`,
    );
  }
  return { limit: best?.limit ?? FIXED_SEARCH[0], lines };
}

function perSecond(result, pick) {
  const out = [];
  for (let i = 0; i < result.arrivedAt.length; i++) {
    const s = Math.floor(result.arrivedAt[i] / 1000);
    (out[s] ??= []).push(i);
  }
  return Array.from(out, (indices) => pick(indices ?? []));
}

function p99Of(result, indices) {
  const served = indices.filter((i) => result.outcome[i] !== SHED);
  const sorted = Float64Array.from(served, (i) => result.latency[i]).toSorted();
  return sorted.length === 0 ? 0 : sorted[Math.floor(0.99 * (sorted.length - 1))];
}

/** The step load's chart: the limit, goodput and p99 over time, a line per row. */
export function stepChart(title, rows, results) {
  const goodput = results.map((r) =>
    perSecond(r, (indices) => indices.filter((i) => r.outcome[i] === OK).length),
  );
  const p99 = results.map((r) => perSecond(r, (indices) => Math.min(1000, p99Of(r, indices))));
  const limits = results.map((r) => limitPerSecond(r).map((v) => (Number.isNaN(v) ? 0 : v)));
  return panelsChart(
    title,
    rows.map((row) => row.label),
    [
      { title: 'the limit (1 s mean; no limit: 0)', max: 24, lines: limits },
      { title: 'goodput: requests/s answered within 1 s (by arrival)', max: 120, lines: goodput },
      { title: 'p99 latency of served requests, ms (by arrival second)', max: 1000, lines: p99 },
    ],
  );
}

/** The step load through every row: its table (a line per row and step) and chart. */
export async function stepSection(rows, unloadedP99, seed) {
  const lines = [
    '| row | step (rps) | mean limit | settle (s) | shed % | goodput/s | p50 ms | p99 ms (x unloaded) |',
    '| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const results = [];
  const figures = {};
  for (const row of rows) {
    const result = await simulateLimit(stepLoad(), row, { seed });
    results.push(result);
    const steps = stepFigures(result, TRUE_LIMIT);
    figures[row.name] = steps;
    for (const s of steps) {
      lines.push(
        `| ${row.label} | ${s.rate} | ${Number.isNaN(s.meanLimit) ? '–' : fixed(s.meanLimit, 1)} | ${row === noLimit ? '–' : seconds(s.settleMs)} | ${fixed(s.shedPct, 1)} | ${fixed(s.goodput, 1)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} (${Number.isFinite(s.p99Ms) ? fixed(s.p99Ms / unloadedP99, 2) : '∞'}) |`,
      );
    }
  }
  return { lines, figures, chart: stepChart(stepLoad().name, rows, results) };
}

/** 10 minutes at 1.2x: the limit's slope (from the second minute), its mean in the first and last minute. */
export async function driftSection(rows, seed) {
  const scenario = drift();
  const lines = [
    '| row | limit slope (per min) | mean limit, minute 1 / minute 10 | shed % | goodput/s | p99 ms |',
    '| :--- | ---: | ---: | ---: | ---: | ---: |',
  ];
  const figures = {};
  const results = [];
  for (const row of rows) {
    const result = await simulateLimit(scenario, row, { seed });
    results.push(result);
    const end = scenario.durationMs;
    const [first, last] = [
      windowFigures(result, 0, 60_000),
      windowFigures(result, end - 60_000, end),
    ];
    const all = windowFigures(result, 60_000, end);
    const slope = row === noLimit ? Number.NaN : limitSlopePerMinute(result, 60_000);
    figures[row.name] = { slope, first: first.meanLimit, last: last.meanLimit, ...all };
    lines.push(
      `| ${row.label} | ${Number.isNaN(slope) ? '–' : fixed(slope, 3)} | ${row === noLimit ? '–' : `${fixed(first.meanLimit, 2)} / ${fixed(last.meanLimit, 2)}`} | ${fixed(all.shedPct, 1)} | ${fixed(all.goodput, 1)} | ${ms(all.p99Ms)} |`,
    );
  }
  return { lines, figures, chart: driftChart(scenario.name, rows, results) };
}

function driftChart(title, rows, results) {
  const limits = results.map((r) => limitPerSecond(r).map((v) => (Number.isNaN(v) ? 0 : v)));
  const goodput = results.map((r) =>
    perSecond(r, (indices) => indices.filter((i) => r.outcome[i] === OK).length),
  );
  return panelsChart(
    title,
    rows.map((row) => row.label),
    [
      {
        title: 'the limit (1 s mean; no limit: 0)',
        max: Math.max(10, Math.ceil(Math.max(...limits.flat()) / 10) * 10),
        lines: limits,
      },
      { title: 'goodput: requests/s answered within 1 s (by arrival)', max: 150, lines: goodput },
    ],
    { every: 60, text: (s) => `${s / 60} min` },
  );
}

/** A 500 ms stall at 60 s under 0.9x: the limit's minimum after it and the time back. */
export async function stallSection(rows, seed) {
  const scenario = stall();
  const { atMs, ms: stallMs } = scenario.stalls[0];
  const lines = [
    '| row | mean limit before | minimum after | back within 20% (s after the stall) | shed % / goodput/s / p99 ms, 10 s from the stall |',
    '| :--- | ---: | ---: | ---: | ---: |',
  ];
  const figures = {};
  for (const row of rows) {
    const f = stallFigures(await simulateLimit(scenario, row, { seed }), atMs, stallMs);
    figures[row.name] = f;
    const limited = row !== noLimit;
    lines.push(
      `| ${row.label} | ${limited ? fixed(f.before, 1) : '–'} | ${limited ? fixed(f.minAfter) : '–'} | ${limited ? seconds(f.backMs) : '–'} | ${fixed(f.after.shedPct, 1)} / ${fixed(f.after.goodput, 1)} / ${ms(f.after.p99Ms)} |`,
    );
  }
  return { lines, figures };
}

/**
 * The step load through `rows` (one algorithm with each queue): goodput at each step, the share
 * shed at 90 rps, p99 at 200 rps, and whether it meets p99 within 2x the unloaded p99 there.
 */
export async function queueSweepSection(rows, unloadedP99, seed) {
  const lines = [
    '| row | goodput/s at 50 / 90 / 200 / 100 rps | shed % at 90 rps | p99 ms at 200 rps (x unloaded) |',
    '| :--- | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    const steps = stepFigures(await simulateLimit(stepLoad(), row, { seed }), TRUE_LIMIT);
    const at = (rate) => steps.find((s) => s.rate === rate);
    lines.push(
      `| ${row.label} | ${steps.map((s) => fixed(s.goodput, 1)).join(' / ')} | ${fixed(at(90).shedPct, 1)} | ${ms(at(200).p99Ms)} (${fixed(at(200).p99Ms / unloadedP99, 2)}) |`,
    );
  }
  return { lines };
}
