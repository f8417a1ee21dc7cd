// The figures of a limit run (./simulate.mjs): per window of arrival time, the
// shed share, goodput and latency, by criticality; the limit's mean, how long
// it took to settle near the true limit, its slope, and its dip after a stall.

import { OK, SAMPLE_MS, SHED } from './simulate.mjs';

function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).toSorted();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function mean(values) {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Limit samples taken in [fromMs, toMs). */
function limitSamples(result, fromMs, toMs) {
  return result.limit.slice(Math.ceil(fromMs / SAMPLE_MS), Math.ceil(toMs / SAMPLE_MS));
}

function classFigures(result, indices, seconds) {
  let ok = 0;
  let shed = 0;
  const latencies = [];
  for (const i of indices) {
    if (result.outcome[i] === OK) ok++;
    if (result.outcome[i] === SHED) shed++;
    else latencies.push(result.latency[i]);
  }
  return {
    offered: indices.length,
    goodput: ok / seconds,
    goodputPct: indices.length === 0 ? Number.NaN : (100 * ok) / indices.length,
    shedPct: indices.length === 0 ? Number.NaN : (100 * shed) / indices.length,
    /** Latency of the requests the server served (shed ones are answered at once). */
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
}

/** Figures of the requests that arrived in [fromMs, toMs), in all and by criticality. */
export function windowFigures(result, fromMs, toMs) {
  const all = [];
  const critical = [];
  const sheddable = [];
  for (let i = 0; i < result.arrivedAt.length; i++) {
    const at = result.arrivedAt[i];
    if (at < fromMs || at >= toMs) continue;
    all.push(i);
    (result.critical[i] ? critical : sheddable).push(i);
  }
  const seconds = (toMs - fromMs) / 1000;
  return {
    ...classFigures(result, all, seconds),
    critical: classFigures(result, critical, seconds),
    sheddable: classFigures(result, sheddable, seconds),
    meanLimit: mean(limitSamples(result, fromMs, toMs)),
  };
}

/** The limit's mean over each whole second. */
export function limitPerSecond(result) {
  const per = 1000 / SAMPLE_MS;
  const out = [];
  for (let i = 0; i + per <= result.limit.length; i += per) {
    out.push(mean(result.limit.slice(i, i + per)));
  }
  return out;
}

/**
 * Milliseconds from `fromMs` to the first second from which the limit's 1 s mean stays within
 * `band` of `target` for `holdS` seconds in a row, before `toMs`; undefined if it never does.
 */
export function settleMs(result, fromMs, toMs, target, { band = 0.2, holdS = 5 } = {}) {
  const seconds = limitPerSecond(result);
  const near = (v) => Math.abs(v - target) <= band * target;
  const first = Math.ceil(fromMs / 1000);
  const last = Math.floor(toMs / 1000) - holdS;
  for (let s = first; s <= last; s++) {
    let held = true;
    for (let k = s; k < s + holdS && held; k++) held = near(seconds[k]);
    if (held) return s * 1000 - fromMs;
  }
  return undefined;
}

/** The limit's least-squares slope from `fromMs` to the end, per minute. */
export function limitSlopePerMinute(result, fromMs) {
  const first = Math.ceil(fromMs / SAMPLE_MS);
  const ys = result.limit.slice(first);
  const xs = ys.map((_, k) => ((first + k) * SAMPLE_MS) / 60_000);
  const mx = mean(xs);
  const my = mean(ys);
  let num = 0;
  let den = 0;
  for (let k = 0; k < ys.length; k++) {
    num += (xs[k] - mx) * (ys[k] - my);
    den += (xs[k] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * Around a stall at `atMs` of `ms`: the limit's mean over the 10 s before, its minimum in the
 * 30 s from the stall, and the time from the stall's end to the first sample after that minimum
 * back within 20% of the mean before (0 if it never left; undefined if not within 30 s).
 */
export function stallFigures(result, atMs, ms) {
  const before = mean(limitSamples(result, atMs - 10_000, atMs));
  const from = Math.ceil(atMs / SAMPLE_MS);
  const after = result.limit.slice(from, from + 30_000 / SAMPLE_MS);
  const minAfter = Math.min(...after);
  const lowest = from + after.indexOf(minAfter);
  let backMs = minAfter >= 0.8 * before ? 0 : undefined;
  for (let k = lowest; backMs === undefined && k < from + after.length; k++) {
    if (result.limit[k] >= 0.8 * before) backMs = Math.max(0, k * SAMPLE_MS - (atMs + ms));
  }
  return { before, minAfter, backMs, after: windowFigures(result, atMs, atMs + 10_000) };
}

/**
 * Per step of a run (each phase): its rate, the figures of its settled part (from
 * `settledAfterMs` after it begins to its end) and the time its limit took to settle
 * within 20% of `target`.
 */
export function stepFigures(result, target, { settledAfterMs = 10_000 } = {}) {
  const phases = result.scenario.phases;
  return phases.map((phase, i) => {
    const endMs = i + 1 < phases.length ? phases[i + 1].atMs : result.scenario.durationMs;
    return {
      rate: phase.rate,
      ...windowFigures(result, phase.atMs + settledAfterMs, endMs),
      settleMs: settleMs(result, phase.atMs, endMs, target),
    };
  });
}
