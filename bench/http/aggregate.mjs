// From the samples of an HTTP run to the figures of the table: per row the
// median over its segments of each measure; the ratios to the row's baseline
// from each pair (the row and its baseline run one right after the other), and
// to the row it is also compared with (same baseline) from each round, as the
// quotient of the two rows' paired ratios in that round; each as their median
// with the 25th and 75th percentiles (and the smallest and largest).

import { median, quantile } from '../harness.mjs';

const summary = (values) => ({
  median: median(values),
  p25: quantile(values, 0.25),
  p75: quantile(values, 0.75),
  min: Math.min(...values),
  max: Math.max(...values),
  n: values.length,
});

const MEASURES = ['rps', 'p50', 'p99', 'p999', 'cpuUsPerRequest'];

/** Ratios a / b of one measure, over the groups (pairs or rounds) holding both. */
function ratios(groups, a, b, measure) {
  const out = [];
  for (const rows of groups.values())
    if (rows.has(a) && rows.has(b)) out.push(rows.get(a)[measure] / rows.get(b)[measure]);
  return out.length === 0 ? undefined : summary(out);
}

/** Per pair: the sample of each row in it. */
function pairs(samples) {
  const groups = new Map();
  for (const s of samples) {
    if (!groups.has(s.pair)) groups.set(s.pair, new Map());
    groups.get(s.pair).set(s.row, s);
  }
  return groups;
}

/** Per round, (a / its baseline) / (b / its baseline), each from its own pair. */
function relative(samples, byPair, a, b, baseline, measure) {
  const paired = (row, round) => {
    const s = samples.find((x) => x.row === row && x.round === round);
    const base = s === undefined ? undefined : byPair.get(s.pair).get(baseline);
    return base === undefined ? undefined : s[measure] / base[measure];
  };
  const out = [];
  for (const round of new Set(samples.map((s) => s.round))) {
    const ra = paired(a, round);
    const rb = paired(b, round);
    if (ra !== undefined && rb !== undefined) out.push(ra / rb);
  }
  return out.length === 0 ? undefined : summary(out);
}

export function aggregate(samples, rows, adapters) {
  const out = {};
  for (const adapter of adapters) {
    const mine = samples.filter((s) => s.adapter === adapter);
    const byPair = pairs(mine);
    out[adapter] = {};
    for (const row of rows) {
      const own = mine.filter((s) => s.row === row.id);
      if (own.length === 0) continue;
      const entry = {};
      for (const m of MEASURES) entry[m] = summary(own.map((s) => s[m]));
      entry.requests = own.reduce((n, s) => n + s.requests, 0);
      const against = (ratio, other) =>
        other === undefined || other === row.id
          ? undefined
          : {
              of: other,
              rps: ratio(other, 'rps'),
              p99: ratio(other, 'p99'),
              cpu: ratio(other, 'cpuUsPerRequest'),
            };
      entry.vsBaseline = against((b, m) => ratios(byPair, row.id, b, m), row.baseline);
      entry.vsAlso = against(
        (b, m) => relative(mine, byPair, row.id, b, row.baseline, m),
        row.also,
      );
      out[adapter][row.id] = entry;
    }
  }
  return out;
}
