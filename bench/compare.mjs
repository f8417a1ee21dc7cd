// What moved between two benchmark results (issue 18).
//
//   npm run bench:compare -- A B [--all]
//
// A and B are each one of:
//   - a version with a release file: `0.1.0` (bench/results/0.1.0.json: its engine and HTTP runs);
//   - a results file: `bench/results.json`, `bench/http-results.json`, a release file;
//   - a run of the logs (bench/results/runs.jsonl, then local-runs.jsonl): `last`, `last~1`, ...
//     (`last:http`, `last~2:engine` for one benchmark: the logs interleave engine and HTTP
//     runs, so `last~1:engine last:engine` pairs two engine runs), or a commit (`ae94837`:
//     its latest engine and HTTP lines).
//
// Metrics are named by scenario and row id (`engine.deadline.oursDefaults`), never by
// label: a label may change (the default deadline's length is in one) and still pair.
// Every metric both have is listed with A, B and the change; a metric has MOVED
// when B's median lies outside A's spread (p25–p75 over rounds) and changed by
// more than 3%: one run's noise is not news.
// Better or worse is the direction the metric wants (ratios of cost: lower).

import { existsSync, readFileSync } from 'node:fs';
import { LOCAL_RUN_LOG, RUN_LOG, metricsOf, releaseFile } from './results/history.mjs';

const THRESHOLD = 0.03;

function readLog() {
  const lines = [];
  for (const file of [RUN_LOG, LOCAL_RUN_LOG]) {
    if (!existsSync(file)) continue;
    for (const text of readFileSync(file, 'utf8').split('\n'))
      if (text.trim() !== '') lines.push(JSON.parse(text));
  }
  return lines.toSorted((a, b) => a.date.localeCompare(b.date));
}

/** { name, metrics } of one argument. */
function resolve(spec) {
  const asLog = /^last(?:~(\d+))?(?::(engine|http))?$/.exec(spec);
  if (asLog) {
    const back = Number(asLog[1] ?? 0);
    const kind = asLog[2];
    const lines = readLog().filter((l) => kind === undefined || l.kind === kind);
    const line = lines[lines.length - 1 - back];
    if (line === undefined) throw new Error(`${spec}: the logs hold only ${lines.length} runs`);
    return {
      name: `${spec} (${line.kind} ${line.mode}, ${line.commit}, ${line.date})`,
      kind: line.kind,
      metrics: line.metrics,
    };
  }
  const file = existsSync(spec)
    ? spec
    : existsSync(releaseFile(spec))
      ? releaseFile(spec)
      : undefined;
  if (file !== undefined) {
    const json = JSON.parse(readFileSync(file, 'utf8'));
    if (json.engine !== undefined || json.http !== undefined)
      return {
        name: `${spec} (release ${json.version})`,
        metrics: { ...json.engine?.metrics, ...json.http?.metrics },
      };
    return {
      name: `${spec} (${json.kind ?? 'engine'} ${json.mode}, ${json.environment?.commit})`,
      metrics: metricsOf(json),
    };
  }
  const byCommit = readLog().filter((l) => l.commit.startsWith(spec));
  if (byCommit.length > 0) {
    const latest = {};
    for (const l of byCommit) latest[l.kind] = l;
    return {
      name: `${spec} (${Object.values(latest)
        .map((l) => `${l.kind} ${l.mode} ${l.date}`)
        .join(', ')})`,
      metrics: Object.assign({}, ...Object.values(latest).map((l) => l.metrics)),
    };
  }
  throw new Error(
    `${spec}: not a version with a file in bench/results/, a results file, "last[~N][:engine|http]" or a commit in the logs`,
  );
}

const f = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3));

function main() {
  const argv = process.argv.slice(2);
  const all = argv.includes('--all');
  const [specA, specB] = argv.filter((a) => !a.startsWith('--'));
  if (specA === undefined || specB === undefined) {
    console.error('usage: npm run bench:compare -- A B [--all]   (see bench/compare.mjs)');
    process.exit(2);
  }
  const a = resolve(specA);
  const b = resolve(specB);
  console.log(`A: ${a.name}\nB: ${b.name}\n`);
  const rows = [];
  for (const [name, ma] of Object.entries(a.metrics)) {
    const mb = b.metrics[name];
    if (mb === undefined) continue;
    const change = mb.median / ma.median - 1;
    const outside = mb.median < ma.lo || mb.median > ma.hi;
    const moved = outside && Math.abs(change) > THRESHOLD;
    const better = ma.better === 'higher' ? change > 0 : change < 0;
    rows.push({ name, ma, mb, change, moved, better });
  }
  const onlyA = Object.keys(a.metrics).filter((n) => b.metrics[n] === undefined);
  const onlyB = Object.keys(b.metrics).filter((n) => a.metrics[n] === undefined);
  const shown = all ? rows : rows.filter((r) => r.moved);
  const width = Math.max(6, ...shown.map((r) => r.name.length));
  console.log(`${'metric'.padEnd(width)}  ${'A'.padStart(18)}  ${'B'.padStart(8)}  change`);
  for (const r of shown.toSorted((x, y) => Math.abs(y.change) - Math.abs(x.change))) {
    const mark = r.moved ? (r.better ? '  better' : '  WORSE') : '';
    console.log(
      `${r.name.padEnd(width)}  ${`${f(r.ma.median)} (${f(r.ma.lo)}–${f(r.ma.hi)})`.padStart(18)}  ${f(r.mb.median).padStart(8)}  ${`${(100 * r.change).toFixed(1)}%`.padStart(6)}${mark}`,
    );
  }
  const moved = rows.filter((r) => r.moved);
  console.log(
    `\n${rows.length} metrics in both; ${moved.length} moved (${moved.filter((r) => r.better).length} better, ${moved.filter((r) => !r.better).length} worse)${all ? '' : '; --all lists every metric'}` +
      (onlyA.length + onlyB.length > 0
        ? `; ${onlyA.length} only in A, ${onlyB.length} only in B`
        : ''),
  );
  // The logs interleave engine and HTTP runs: `last~1 last` may be one of each.
  if (rows.length === 0 && a.kind !== undefined && b.kind !== undefined && a.kind !== b.kind)
    console.log(
      `A is a run of the ${a.kind} benchmark and B of the ${b.kind} one: name the benchmark, e.g. last~1:${b.kind} last:${b.kind}`,
    );
}

main();
