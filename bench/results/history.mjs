// The results history (issue 18): what every run leaves behind, in a form the
// compare script (bench/compare.mjs) can put side by side.
//
// - bench/results/runs.jsonl: one JSON line per full run (those that rewrite the
//   committed tables), committed with them;
// - bench/results/local-runs.jsonl: one line per other run (quick, partial, CI),
//   not committed (.gitignore);
// - bench/results/<version>.json: per release (package.json's version), the
//   latest full engine run and the latest full HTTP run of that version.
//
// A line or a release part holds `metrics`: a flat map of
// `name -> { median, lo, hi, better }`, ratios measured side by side in one run
// (lo/hi: the spread the run reported), plus a few absolute figures.

import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
export const RUN_LOG = here('./runs.jsonl');
export const LOCAL_RUN_LOG = here('./local-runs.jsonl');
export const releaseFile = (version) => here(`./${version}.json`);

const version = (name) =>
  JSON.parse(
    readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8'),
  ).version;

export const packageVersion = () =>
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/** Where and on what a run ran. */
export function environment() {
  const git = (args) => {
    try {
      return execFileSync('git', args, {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return undefined;
    }
  };
  return {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform} ${process.arch}`,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    loadAverageAtStart: os.loadavg().map((l) => Number(l.toFixed(2))),
    commit: git(['rev-parse', '--short', 'HEAD']) ?? 'unknown',
    dirty: (git(['status', '--porcelain', '--', 'lib']) ?? '') !== '',
    version: packageVersion(),
    peers: {
      opossum: version('opossum'),
      cockatiel: version('cockatiel'),
      autocannon: version('autocannon'),
    },
  };
}

const quartiles = (s, better = 'lower') =>
  s === undefined ? undefined : { median: s.median, lo: s.p25, hi: s.p75, better };
const range = (s, better) =>
  s === undefined
    ? undefined
    : { median: s.median, lo: s.p25 ?? s.min, hi: s.p75 ?? s.max, better };
const single = (v, better = 'lower') =>
  v === undefined ? undefined : { median: v, lo: v, hi: v, better };

/** The flat metrics of a run of either benchmark (`results.json` or `http-results.json`). */
export function metricsOf(results) {
  const m = {};
  const put = (name, value) => {
    if (value !== undefined && Number.isFinite(value.median)) m[name] = value;
  };
  if (results.kind === 'http') {
    for (const [adapter, rows] of Object.entries(results.adapters ?? {}))
      for (const [row, r] of Object.entries(rows)) {
        const p = `http.${adapter}.${row}`;
        put(`${p}.rps-ratio`, range(r.vsBaseline?.rps, 'higher'));
        put(`${p}.p99-ratio`, range(r.vsBaseline?.p99, 'lower'));
        put(`${p}.cpu-ratio`, range(r.vsBaseline?.cpu, 'lower'));
        put(`${p}.cpu-us`, range(r.cpuUsPerRequest, 'lower'));
      }
    return m;
  }
  for (const scenario of ['closed', 'deadline', 'open', 'mixed'])
    for (const r of results[scenario]?.rows ?? [])
      put(`engine.${scenario}.${r.id}`, quartiles(r.ratioToMinimal));
  for (const g of results.mixed?.growth ?? []) put(`engine.growth.${g.large}`, quartiles(g.ratio));
  for (const r of results.footprint?.rows ?? [])
    put(`engine.bytes.${r.kind}`, single(Math.max(r.bytesPerBreaker, r.bytesPerBreakerUsed)));
  if (results.nest?.status === 'measured') {
    put('engine.nest.decorator', quartiles(results.nest.decoratorRatio));
    put('engine.nest.operator', quartiles(results.nest.operatorRatio));
  }
  for (const r of results.sharedRedis?.rows ?? [])
    if (r.ratioToMemory) put(`engine.redis.${r.id}`, quartiles(r.ratioToMemory));
  return m;
}

const kindOf = (results) => (results.kind === 'http' ? 'http' : 'engine');

/** One line in the log: the committed one for full runs, the local one otherwise. */
export function appendRun(results, { committed }) {
  const env = results.environment;
  const line = {
    kind: kindOf(results),
    mode: results.mode,
    date: env.date,
    commit: env.commit,
    dirty: env.dirty,
    version: env.version ?? packageVersion(),
    node: env.node,
    cores: env.cores,
    load: [env.loadAverageAtStart?.[0], env.loadAverageAtEnd?.[0]],
    targets: Object.fromEntries((results.targets ?? []).map((t) => [t.id, t.status])),
    metrics: metricsOf(results),
  };
  appendFileSync(committed ? RUN_LOG : LOCAL_RUN_LOG, `${JSON.stringify(line)}\n`);
}

/** The release file of this version keeps the latest full run of each benchmark. */
export function writeRelease(results) {
  const v = results.environment.version ?? packageVersion();
  const file = releaseFile(v);
  const release = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { version: v };
  const env = results.environment;
  release[kindOf(results)] = {
    date: env.date,
    commit: env.commit,
    node: env.node,
    cpu: `${env.cpuModel}, ${env.cores} cores`,
    targets: Object.fromEntries((results.targets ?? []).map((t) => [t.id, t.status])),
    metrics: metricsOf(results),
  };
  writeFileSync(file, `${JSON.stringify(release, null, 2)}\n`);
}
