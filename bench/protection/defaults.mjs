// node bench/protection/defaults.mjs [--seeds 1,2,3] (after npm run build):
// the candidate defaults (candidates.mjs) through every scenario, beside
// the previous defaults and the best peer default per figure, over several seeds (an
// outage length of its own each); writes the "Candidate defaults" section of
// bench/PROTECTION-RESULTS.md and a line per seed to the results history.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as core from '../../dist/core/index.js';
import { CANDIDATES, CANDIDATES_MARKER as MARKER } from './candidates.mjs';
import { appendProtectionRun, PROTECTION_LOG } from './history.mjs';
import { peers } from './peers.mjs';
import * as scenarios from './scenarios.mjs';
import { simulate } from './simulate.mjs';

const args = process.argv.slice(2);
const seedsAt = args.indexOf('--seeds');
const seeds = seedsAt === -1 ? [1, 2, 3] : args[seedsAt + 1].split(',').map(Number);
// One incident length per seed (the phase of a 10 s and of a 30 s open period: 0, half, a quarter), to keep the run short.
const LENGTHS = [60_000, 75_000, 67_500];
const lengths = seeds.map((_, i) => LENGTHS[i % LENGTHS.length]);

/** The scenarios, with the incident length `ms` where it is swept. */
const planFor = (ms) => [
  ['1', 'hard outage', scenarios.hardOutage(ms)],
  ['2a', 'hung, call aborted', scenarios.hung('abort', ms)],
  ['2b', 'hung, call not cancelled', scenarios.hung('race', ms)],
  ['3', 'brownout', scenarios.brownout()],
  ['4', 'slow x10', scenarios.slow()],
  ['5', 'back at 10% capacity', scenarios.reducedCapacity(ms)],
  ['6', 'retry storm', scenarios.retryStorm()],
  ['7', '429 + Retry-After', scenarios.overloaded()],
  ['8', 'one bad host of five', scenarios.badHost()],
  ['9', 'fleet of 10, unshared', scenarios.fleetOutage(ms)],
];
const plan = planFor(lengths[0]);

const peerRows = [
  [peers.opossum, 'opossum'],
  [peers.cockatielConsecutive, 'cockatiel Consecutive(5)'],
  [peers.cockatielSampling, 'cockatiel Sampling'],
];
const candidates = CANDIDATES.map((make) => make(core));

// Each figure: how to read it from a simulation, which way is better, and the
// difference within which two rows count as equal (noise across seeds).
const FIGURES = [
  ['wasted', (f) => f.wasted, 'lower', (v) => Math.max(2, 0.02 * v)],
  ['peak in-flight', (f) => f.peakInFlight, 'lower', (v) => Math.max(2, 0.05 * v)],
  ['waiting (s)', (f) => f.waitingS, 'lower', (v) => Math.max(1, 0.02 * v)],
  ['detect (s)', (f) => (f.detectMs ?? Infinity) / 1000, 'lower', () => 0.05],
  ['recover (s)', (f) => (f.recoverMs ?? Infinity) / 1000, 'lower', () => 0.25],
  ['goodput/s', (f) => f.goodput, 'higher', (v) => 0.01 * v],
  ['p99 (ms)', (f) => f.p99Ms, 'lower', (v) => Math.max(10, 0.03 * v)],
];
// A brownout should not trip: a breaker that trips there cuts wasted calls,
// waiting and p99 by turning away calls that would succeed 70 % of the time,
// so scenario 3 is compared on goodput alone.
const skipped = (scenario, figure) => scenario === '3' && figure !== 'goodput/s';
// Outside the brownout, a peer that never turned a call away in a scenario is no
// breaker there: it has no open period to recover from, so it is left out of the
// best time to recover and goodput.
const NEEDS_A_TRIP = new Set(['recover (s)', 'goodput/s']);

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const text = (value, digits) =>
  Number.isNaN(value)
    ? '–'
    : value === Infinity
      ? 'never'
      : value.toLocaleString('en-US', {
          maximumFractionDigits: digits,
          minimumFractionDigits: digits,
        });

const started = Date.now();
/** results[scenario][row] = [figures per seed and length] */
const results = {};
// --from-history: the tables again from the last run's lines (one per seed), without simulating.
const fromHistory = args.includes('--from-history');
if (fromHistory) {
  const lines = readFileSync(PROTECTION_LOG, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((line) => line.kind === 'protection-candidates')
    .slice(-seeds.length);
  for (const line of lines)
    for (const r of line.results) ((results[r.scenario] ??= {})[r.implementation] ??= []).push(r);
}
for (const [i, seed] of fromHistory ? [] : seeds.entries()) {
  const history = [];
  for (const [id, , scenario] of planFor(lengths[i])) {
    results[id] ??= {};
    for (const row of [...peerRows.map(([p]) => p), ...candidates]) {
      const figures = await simulate(scenario, row, { seed });
      (results[id][row.name] ??= []).push(figures);
      history.push({ scenario: id, run: scenario.name, implementation: row.name, figures });
      process.stdout.write('.');
    }
  }
  appendProtectionRun('protection-candidates', { seed, quick: false, results: history });
}

/** Mean of each figure over every seed and length. */
const means = (list) => FIGURES.map(([, read]) => mean(list.map(read)));
const worse = (value, best, direction, tolerance) =>
  direction === 'lower' ? value > best + tolerance(best) : value < best - tolerance(best);
const better = (value, best, direction, tolerance) =>
  direction === 'lower' ? value < best - tolerance(best) : value > best + tolerance(best);

const out = [
  MARKER,
  '## Candidate defaults',
  '',
  `\`node bench/protection/defaults.mjs\`: this package's engine (today's \`dist/\`, lib/ unchanged) given candidate defaults, through every scenario, over seeds ${seeds.join(', ')}, where the incident's length is swept with an outage of ${lengths.map((ms) => ms / 1000).join(', ')} s respectively (so that the phase of a 10 s and of a 30 s open period varies); each cell is the mean of the ${seeds.length} runs. opossum 9.0.0 and cockatiel 3.2.1 (opossum 10 and cockatiel 4 need Node 22). "best peer" is the best of opossum, cockatiel \`ConsecutiveBreaker(5)\` and cockatiel \`SamplingBreaker\` (each with its README defaults) on each figure separately, naming which. Rows marked "modelled" include a lever the engine does not have yet, modelled outside it in \`bench/protection/candidates.mjs\`: an adaptive deadline (5 x the p99 of the last 128 successes, within 0.5 to 10 s) and an adaptive slow start (10 % of calls, doubling every 250 ms without a failure, halving on one). "lost to best peer": the figures on which the row is worse than the best peer beyond the noise (2 % or 2 calls; 0.05 s to detect; 0.25 s to recover; 1 % of goodput; 3 % or 10 ms of p99). Scenario 3 is compared on goodput alone: a breaker that trips in a brownout cuts wasted calls, waiting and p99 by turning away calls that would succeed 70 % of the time. Outside the brownout, a peer that never turned a call away in a scenario (no breaker there, nothing to recover from) is left out of the best time to recover and goodput. Scenario 9 here is the unshared fleet (each replica alone), as the peers are. What the figures recommend: [docs/protection-defaults.md](../docs/protection-defaults.md).`,
];

const summary = {};
for (const [id, title] of plan) {
  const peerMeans = peerRows.map(([p, name]) => [name, means(results[id][p.name])]);
  const detect = FIGURES.findIndex(([name]) => name === 'detect (s)');
  const best = FIGURES.map(([name, , direction], i) => {
    const eligible =
      NEEDS_A_TRIP.has(name) && id !== '3'
        ? peerMeans.filter((entry) => Number.isFinite(entry[1][detect]))
        : peerMeans;
    if (eligible.length === 0) return { value: NaN, by: 'none trips' };
    let chosen = eligible[0];
    for (const entry of eligible)
      if (direction === 'lower' ? entry[1][i] < chosen[1][i] : entry[1][i] > chosen[1][i])
        chosen = entry;
    return { value: chosen[1][i], by: chosen[0] };
  });
  out.push(
    '',
    `### ${id}. ${title}`,
    '',
    `| row | ${FIGURES.map(([name]) => name).join(' | ')} | lost to best peer |`,
    `| :--- | ${FIGURES.map(() => '---:').join(' | ')} | :--- |`,
    `| best peer | ${best.map((b, i) => `${text(b.value, i >= 3 && i <= 4 ? 2 : i === 5 ? 1 : 0)} (${b.by})`).join(' | ')} | |`,
  );
  for (const row of candidates) {
    const values = means(results[id][row.name]);
    const lost = [];
    const won = [];
    FIGURES.forEach(([name, , direction, tolerance], i) => {
      if (skipped(id, name)) return;
      if (worse(values[i], best[i].value, direction, tolerance)) lost.push(name);
      else if (better(values[i], best[i].value, direction, tolerance)) won.push(name);
    });
    (summary[row.name] ??= {})[id] = { lost, won, values };
    out.push(
      `| ${row.label} | ${values.map((v, i) => text(v, i >= 3 && i <= 4 ? 2 : i === 5 ? 1 : 0)).join(' | ')} | ${lost.length === 0 ? 'none' : lost.join(', ')} |`,
    );
  }
}

// The summary: per candidate and scenario, the figures lost; the issue's targets
// (strictly better than the best peer on wasted calls and time to recover) in 1, 2a, 2b, 5, 6.
const targets = ['1', '2a', '2b', '5', '6'];
out.push(
  '',
  '### Summary',
  '',
  `Per scenario, the figures on which a candidate is worse than the best peer ("–": none). Targets: strictly better than the best peer on wasted calls and on time to recover in scenarios ${targets.join(', ')}.`,
  '',
  `| row | ${plan.map(([id]) => id).join(' | ')} | targets met |`,
  `| :--- | ${plan.map(() => ':---').join(' | ')} | :--- |`,
);
for (const row of candidates) {
  const cells = plan.map(([id]) => {
    const lost = summary[row.name][id].lost;
    return lost.length === 0 ? '–' : lost.map((name) => name.split(' ')[0]).join(', ');
  });
  const met = targets.filter((id) => {
    const won = summary[row.name][id].won;
    return won.includes('wasted') && won.includes('recover (s)');
  });
  out.push(
    `| ${row.label} | ${cells.join(' | ')} | ${met.length} of ${targets.length}${met.length > 0 ? ` (${met.join(', ')})` : ''} |`,
  );
}
out.push(
  '',
  fromHistory
    ? 'Tables rebuilt from the results history (`--from-history`), from the last run of the candidates.'
    : `Ran in ${((Date.now() - started) / 1000).toFixed(0)} s of wall time.`,
  '',
);

const file = fileURLToPath(new URL('../PROTECTION-RESULTS.md', import.meta.url));
const current = readFileSync(file, 'utf8');
const head = current.includes(MARKER) ? current.slice(0, current.indexOf(MARKER)) : `${current}\n`;
writeFileSync(file, `${head}${out.join('\n')}`);
process.stdout.write(`\nwrote the candidate defaults to ${file}\n`);
