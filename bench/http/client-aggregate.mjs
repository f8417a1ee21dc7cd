// From the samples of the client rows to their figures: per row the median over its segments of
// requests/s and CPU per request; against its baseline, the ratio within each pair, as the median
// over pairs with its 25th and 75th percentiles and a 95 % confidence interval of that median
// (distribution-free: the order statistics around it that a binomial count puts there).

import { median, quantile } from '../harness.mjs';
import { CLIENT_ROWS } from './client-rows.mjs';

/** The ~95 % confidence interval of the median of `values`, from their order statistics. */
export function medianInterval(values) {
  const sorted = values.toSorted((a, b) => a - b);
  const n = sorted.length;
  const half = 0.98 * Math.sqrt(n);
  const lo = Math.max(1, Math.floor(n / 2 - half));
  const hi = Math.min(n, Math.ceil(1 + n / 2 + half));
  return [sorted[lo - 1], sorted[hi - 1]];
}

const summary = (values) => {
  const [ciLow, ciHigh] = medianInterval(values);
  return {
    median: median(values),
    p25: quantile(values, 0.25),
    p75: quantile(values, 0.75),
    ciLow,
    ciHigh,
    min: Math.min(...values),
    max: Math.max(...values),
    n: values.length,
  };
};

export function aggregateClients(samples) {
  const byPair = new Map();
  for (const s of samples) {
    if (!byPair.has(s.pair)) byPair.set(s.pair, new Map());
    byPair.get(s.pair).set(s.row, s);
  }
  const ratio = (a, b, measure) => {
    const out = [];
    for (const rows of byPair.values())
      if (rows.has(a) && rows.has(b)) out.push(rows.get(a)[measure] / rows.get(b)[measure]);
    return out.length === 0 ? undefined : summary(out);
  };
  // Per round, (a / its baseline) / (b / its baseline), each from its own pair.
  const relative = (a, b, baseline, measure) => {
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
  };
  const out = {};
  for (const row of CLIENT_ROWS) {
    const own = samples.filter((s) => s.row === row.id);
    if (own.length === 0) continue;
    out[row.id] = {
      rps: summary(own.map((s) => s.rps)),
      cpuUsPerRequest: summary(own.map((s) => s.cpuUsPerRequest)),
      requests: own.reduce((n, s) => n + s.requests, 0),
      vsBaseline:
        row.baseline === row.id
          ? undefined
          : {
              of: row.baseline,
              rps: ratio(row.id, row.baseline, 'rps'),
              cpu: ratio(row.id, row.baseline, 'cpuUsPerRequest'),
            },
      vsAlso:
        row.also === undefined || !samples.some((s) => s.row === row.also)
          ? undefined
          : {
              of: row.also,
              rps: relative(row.id, row.also, row.baseline, 'rps'),
              cpu: relative(row.id, row.also, row.baseline, 'cpuUsPerRequest'),
            },
    };
  }
  return out;
}
