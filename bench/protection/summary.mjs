// The short protection table of README.md ("Does it protect?") and
// docs/benchmarks.md, rendered from the latest full run in
// bench/results/protection-history.jsonl, so that neither is copied by hand.
//
//   node bench/protection/summary.mjs           print the table
//   node bench/protection/summary.mjs --write   rewrite it in README.md and docs/benchmarks.md
//   node bench/protection/summary.mjs --check   exit 1 if either differs from the history
//
// `npm run bench:protection` (bench/protection/run.mjs) writes it after a full run.
// Each page holds it between SUMMARY_START and SUMMARY_END.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PROTECTION_LOG } from './history.mjs';

export const SUMMARY_START =
  '<!-- protection-summary: start (node bench/protection/summary.mjs --write) -->';
export const SUMMARY_END = '<!-- protection-summary: end -->';

/** The pages that show the table. */
export const SUMMARY_PAGES = ['../../README.md', '../../docs/benchmarks.md'].map((name) =>
  fileURLToPath(new URL(name, import.meta.url)),
);

export const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
export const fixed = (value, digits = 0) =>
  value === undefined
    ? '–'
    : value.toLocaleString('en-US', {
        maximumFractionDigits: digits,
        minimumFractionDigits: digits,
      });

/** One figure over the runs of a scenario (several where the outage's length is swept). */
const FIGURES = {
  wasted: (runs) => fixed(mean(runs.map((r) => r.wasted))),
  peak: (runs) => fixed(Math.max(...runs.map((r) => r.peakInFlight))),
  goodput: (runs) => fixed(mean(runs.map((r) => r.goodput)), 1),
  recover: (runs) => {
    const reached = runs.map((r) => r.recoverMs).filter((ms) => ms !== null);
    if (reached.length === 0) return 'never';
    // No breaker never turns a call away: it "recovers" the moment the dependency does.
    const text = mean(reached) === 0 ? '0' : fixed(mean(reached) / 1000, 1);
    const never = runs.length - reached.length;
    return never === 0 ? text : `${text} (never in ${never} of ${runs.length})`;
  },
};

const COLUMNS = ['none', 'opossum', 'cockatielConsecutive', 'cockatielSampling', 'ours'];

/** The rows: a scenario, what is shown, and for this package a second row of the same run beside it. */
const ROWS = [
  { scenario: '1', title: 'hard outage: calls wasted on the dead dependency', figure: 'wasted' },
  {
    scenario: '1',
    title: 'hard outage: seconds to recover',
    figure: 'recover',
    also: { implementation: 'oursHealthCheck', text: (v) => `${v} with \`healthCheck\`` },
  },
  {
    scenario: '2b',
    title: 'hung, calls not cancelled: peak calls in flight',
    figure: 'peak',
  },
  { scenario: '3', title: 'brownout (30 % 5xx): goodput, calls/s', figure: 'goodput' },
  { scenario: '6', title: 'retry storm: seconds to recover', figure: 'recover' },
  {
    scenario: '9',
    title: 'fleet of 10 replicas: calls wasted',
    figure: 'wasted',
    also: { implementation: 'oursShared', text: (v) => `${v} shared` },
  },
];

/** The latest full run of `npm run bench:protection` in the history (not a candidates run). */
export function latestRun(log = PROTECTION_LOG) {
  const runs = readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
    .filter((run) => run.kind === 'protection' && run.mode === 'full');
  if (runs.length === 0) throw new Error(`${log} holds no full run of bench:protection`);
  return runs.toSorted((a, b) => a.date.localeCompare(b.date)).at(-1);
}

/** Rows renamed since runs were recorded: the history keeps the name of its day. */
const FORMERLY = { oursHealthCheck: 'oursProbe' };

/** The table (and the line naming its run) as Markdown. */
export function renderSummary(run) {
  const cell = (row, implementation) => {
    const named = (name) =>
      run.results.filter((r) => r.scenario === row.scenario && r.implementation === name);
    let runs = named(implementation);
    if (runs.length === 0 && FORMERLY[implementation] !== undefined)
      runs = named(FORMERLY[implementation]);
    if (runs.length === 0)
      throw new Error(`no run of ${implementation} in scenario ${row.scenario}`);
    return FIGURES[row.figure](runs);
  };
  const major = (version) => version.split('.')[0];
  const lines = [
    `| scenario: figure | no breaker | opossum ${major(run.peers.opossum)} | cockatiel \`Consecutive(5)\` | cockatiel \`Sampling\` + 2 s timeout | this package |`,
    '| :--- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const row of ROWS) {
    const cells = COLUMNS.map((implementation) => cell(row, implementation));
    if (row.also !== undefined)
      cells[cells.length - 1] += ` (${row.also.text(cell(row, row.also.implementation))})`;
    lines.push(`| ${row.scenario}. ${row.title} | ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    `From the run of ${run.date.slice(0, 10)} (commit ${run.commit}, Node ${run.node.replace(/^v/, '')}, opossum ${run.peers.opossum}, cockatiel ${run.peers.cockatiel}, seed ${run.seed}).`,
  );
  return lines.join('\n');
}

/** The page with its table replaced by `summary`. */
export function withSummary(page, summary, name = 'the page') {
  const start = page.indexOf(SUMMARY_START);
  const end = page.indexOf(SUMMARY_END);
  if (start === -1 || end < start)
    throw new Error(`${name} has no ${SUMMARY_START} ... ${SUMMARY_END} block`);
  return `${page.slice(0, start + SUMMARY_START.length)}\n\n${summary}\n\n${page.slice(end)}`;
}

/** Rewrites the table on every page; returns the pages that changed. */
export function writeSummaries(run = latestRun()) {
  const summary = renderSummary(run);
  // Every page is checked before any is written: a page without its block changes none.
  const pages = SUMMARY_PAGES.map((file) => {
    const page = readFileSync(file, 'utf8');
    return { file, page, next: withSummary(page, summary, file) };
  });
  const changed = pages.filter(({ page, next }) => next !== page);
  for (const { file, next } of changed) writeFileSync(file, next);
  return changed.map(({ file }) => file);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.includes('--write')) {
    const changed = writeSummaries();
    console.log(
      changed.length === 0 ? 'the tables were up to date' : `wrote ${changed.join(', ')}`,
    );
  } else if (args.includes('--check')) {
    const summary = renderSummary(latestRun());
    const stale = SUMMARY_PAGES.filter((file) => {
      const page = readFileSync(file, 'utf8');
      return withSummary(page, summary, file) !== page;
    });
    for (const file of stale)
      console.error(`${file}: the protection table differs from the latest run (--write)`);
    process.exitCode = stale.length === 0 ? 0 : 1;
  } else console.log(renderSummary(latestRun()));
}
