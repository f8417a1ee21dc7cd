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
import { protectionPlan } from './plan.mjs';
import { simulate } from './simulate.mjs';
import { writeSummaries } from './summary.mjs';
import { HEADER, row } from './table.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const seedAt = args.indexOf('--seed');
const seed = seedAt === -1 ? 1 : Number(args[seedAt + 1]);
const plan = protectionPlan({ quick, peers, ours: oursImplementations(core) });

const started = Date.now();
const out = [
  '# Protection under failure (`npm run bench:protection`)',
  '',
  `Virtual time, seed ${seed}${quick ? ', quick run (fewer outage lengths)' : ''}, Node ${process.version}; opossum 9.0.0 and cockatiel 3.2.1 (the versions that run on Node 20; opossum 10 and cockatiel 4 on Node 22: [PROTECTION-CURRENT-PEERS.md](PROTECTION-CURRENT-PEERS.md)). 100 calls/s (Poisson), a 1 s client timeout, a dependency of 20 slots at ~50 ms (about 350 calls/s); the incident starts at 30 s. How to read it: [docs/protection.md](../docs/protection.md).`,
  '',
  'Columns: wasted calls (reached the dependency and did not succeed), peak in-flight calls at the dependency, caller seconds spent waiting on calls that failed, time to detect (s, incident start to the first fast rejection), time to recover (s, dependency healthy to one second of arrivals at >= 95% of the success ratio before), goodput (successful calls/s from the incident to the end; before it in brackets), caller latency p50 / p99 (ms, from the incident), load amplification (calls the dependency received / caller requests). Swept scenarios (60, 67.5, 75 and 82.5 s; 60 and 75 in a quick run): the mean over the lengths, and the worst time to recover.',
];
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
    HEADER,
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
