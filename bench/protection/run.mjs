// npm run bench:protection [-- --quick] [--seed N]: every scenario through
// every implementation in virtual time; writes bench/PROTECTION-RESULTS.md
// (keeping its candidate-defaults section) and a line to the results history,
// and after a full run the short table of README.md and docs/benchmarks.md
// (bench/protection/summary.mjs).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as core from '../../dist/core/index.js';
import { CANDIDATES_MARKER } from './candidates.mjs';
import { chart } from './chart.mjs';
import { appendProtectionRun } from './history.mjs';
import { oursImplementations } from './ours.mjs';
import { peers } from './peers.mjs';
import { simulate } from './simulate.mjs';
import { fixed, mean, writeSummaries } from './summary.mjs';
import * as scenarios from './scenarios.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const seedAt = args.indexOf('--seed');
const seed = seedAt === -1 ? 1 : Number(args[seedAt + 1]);
const ours = oursImplementations(core);
const common = [
  peers.none,
  peers.opossum,
  peers.cockatielConsecutive,
  peers.cockatielSampling,
  ours.ours,
  ours.oursPrevious,
];

// Incident lengths swept wherever a recovery is measured: a 30 s open period's
// phase must not decide the time to recover.
const sweep = quick ? scenarios.OUTAGE_SWEEP_QUICK_MS : scenarios.OUTAGE_SWEEP_MS;

const plan = [
  {
    title: '1. Hard outage (connection refused), outage length swept',
    runs: sweep.map((ms) => scenarios.hardOutage(ms)),
    rows: [...common, ours.oursHealthCheck],
  },
  {
    title: '2a. Hung dependency, length swept, the 1 s client timeout aborts the call',
    runs: sweep.map((ms) => scenarios.hung('abort', ms)),
    rows: [...common, ours.oursHealthCheck],
  },
  {
    title:
      '2b. Hung dependency, length swept, the caller stops waiting at 1 s but the call is not cancelled',
    runs: sweep.map((ms) => scenarios.hung('race', ms)),
    rows: [...common, ours.oursHealthCheck],
  },
  { title: '3. Brownout: 30% 5xx, latency x3, 2 min', runs: [scenarios.brownout()], rows: common },
  {
    title: '4. Slow dependency: latency x10, no errors, 60 s',
    runs: [scenarios.slow()],
    rows: common,
  },
  {
    title: '5. Down 30 s, then back at 10% of the load, that period swept',
    runs: sweep.map((ms) => scenarios.reducedCapacity(ms)),
    rows: [...common, ours.oursRampUp],
  },
  {
    title: '6. Retry storm: capacity at 70% of the load for 10 s, callers retry 3 times at once',
    runs: [scenarios.retryStorm()],
    rows: [...common, ours.oursRetry],
  },
  {
    title:
      '7. Overload: capacity at 50% of the load, the excess answered 429 + Retry-After 2 s, 60 s',
    runs: [scenarios.overloaded()],
    rows: common,
  },
  {
    title:
      '8. One bad host of five (40% 5xx, +100 ms) for 2 min; a breaker per host, the balancer skips a host whose breaker rejects',
    runs: [scenarios.badHost()],
    rows: [
      peers.none,
      peers.opossum,
      peers.cockatielConsecutive,
      peers.cockatielSampling,
      ours.oursPerKey,
    ],
  },
  {
    title:
      '9. A fleet of 10 replicas (10 calls/s each), the hard outage of 1, outage length swept; a breaker per replica',
    runs: sweep.map((ms) => scenarios.fleetOutage(ms)),
    rows: [...common, ours.oursShared],
  },
];

function row(label, results) {
  const detects = results.map((r) => r.detectMs).filter((v) => v !== undefined);
  const recovers = results.map((r) => r.recoverMs);
  const reached = recovers.filter((v) => v !== undefined);
  const never = recovers.length - reached.length;
  const recoverText =
    reached.length === 0
      ? 'not within the run'
      : results.length === 1
        ? fixed(reached[0] / 1000, 1)
        : `${fixed(mean(reached) / 1000, 1)} (worst ${never > 0 ? `not within the run in ${never} of ${results.length}` : fixed(Math.max(...reached) / 1000, 1)})`;
  return `| ${label} | ${fixed(mean(results.map((r) => r.wasted)))} | ${fixed(Math.max(...results.map((r) => r.peakInFlight)))} | ${fixed(mean(results.map((r) => r.waitingS)))} | ${detects.length === 0 ? '–' : fixed(mean(detects) / 1000, 2)} | ${recoverText} | ${fixed(mean(results.map((r) => r.goodput)), 1)} (${fixed(mean(results.map((r) => r.baselineGoodput)), 1)}) | ${fixed(mean(results.map((r) => r.p50Ms)))} / ${fixed(mean(results.map((r) => r.p99Ms)))} | ${fixed(mean(results.map((r) => r.amplification)), 2)} |`;
}

const started = Date.now();
const out = [
  '# Protection under failure (`npm run bench:protection`)',
  '',
  `Virtual time, seed ${seed}${quick ? ', quick run (fewer outage lengths)' : ''}, Node ${process.version}; opossum 9.0.0 and cockatiel 3.2.1 (the versions that run on Node 20). 100 calls/s (Poisson), a 1 s client timeout, a dependency of 20 slots at ~50 ms (about 350 calls/s); the incident starts at 30 s. How to read it: [docs/protection.md](../docs/protection.md).`,
  '',
  'Columns: wasted calls (reached the dependency and did not succeed), peak in-flight calls at the dependency, caller seconds spent waiting on calls that failed, time to detect (s, incident start to the first fast rejection), time to recover (s, dependency healthy to one second of arrivals at >= 95% of the success ratio before), goodput (successful calls/s from the incident to the end; before it in brackets), caller latency p50 / p99 (ms, from the incident), load amplification (calls the dependency received / caller requests). Swept scenarios (60, 67.5, 75 and 82.5 s; 60 and 75 in a quick run): the mean over the lengths, and the worst time to recover.',
];
const header =
  '| implementation | wasted | peak in-flight | waiting (s) | detect (s) | recover (s) | goodput/s (before) | p50 / p99 ms | amplification |\n| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |';
const history = [];
const chartsDir = new URL('./charts/', import.meta.url);
mkdirSync(chartsDir, { recursive: true });
for (const section of plan) {
  const file = `scenario-${section.title.split('.')[0]}.svg`;
  out.push(
    '',
    `## ${section.title}`,
    '',
    `![${section.title}](protection/charts/${file})`,
    '',
    header,
  );
  const drawn = [];
  for (const implementation of section.rows) {
    const results = [];
    for (const scenario of section.runs) {
      const figures = await simulate(scenario, implementation, { seed });
      results.push(figures);
      history.push({
        scenario: section.title.split('.')[0],
        run: scenario.name,
        implementation: implementation.name,
        figures,
      });
    }
    out.push(row(implementation.label, results));
    drawn.push({ label: implementation.label, series: results[0].series });
    process.stdout.write('.');
  }
  writeFileSync(
    new URL(file, chartsDir),
    chart(`${section.title} (${section.runs[0].name})`, drawn),
  );
}
out.push('', `Ran in ${((Date.now() - started) / 1000).toFixed(0)} s of wall time.`, '');
appendProtectionRun('protection', { seed, quick, results: history });
const file = fileURLToPath(new URL('../PROTECTION-RESULTS.md', import.meta.url));
// The candidate defaults (bench/protection/defaults.mjs) are a run of their own: kept.
const previous = existsSync(file) ? readFileSync(file, 'utf8') : '';
const kept = previous.includes(CANDIDATES_MARKER)
  ? previous.slice(previous.indexOf(CANDIDATES_MARKER))
  : '';
writeFileSync(file, out.join('\n') + (kept === '' ? '' : `\n${kept}`));
process.stdout.write(`\nwrote ${file}\n`);
// A quick run's line goes to the local log: the pages keep the latest full run.
if (!quick)
  for (const page of writeSummaries())
    process.stdout.write(`wrote the protection table of ${page}\n`);
