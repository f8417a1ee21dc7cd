// npm run bench:limit [-- --seed N]: issue 30's limit scenarios through this
// package's ConcurrencyLimiter (dist/core) in the protection simulator's
// virtual time; writes bench/LIMIT-RESULTS.md and its charts in
// bench/protection/charts/. `--core FILE --core-label TEXT` runs another
// build's engine (FILE: its dist/core/index.js), named TEXT on the page: an
// algorithm measured before it is merged here.

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fixed } from '../summary.mjs';
import { limitBenchmark } from './benchmark.mjs';
import { resultsPage } from './report.mjs';

const args = process.argv.slice(2);
const seedAt = args.indexOf('--seed');
const seed = seedAt === -1 ? 1 : Number(args[seedAt + 1]);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const coreFile = option('--core');
const core = await import(
  coreFile === undefined ? '../../../dist/core/index.js' : pathToFileURL(coreFile).href
);

function commitOf() {
  const git = (...a) => execFileSync('git', a, { encoding: 'utf8' }).trim();
  try {
    // The code that ran: the engine and the simulator (not the pages and charts a run writes).
    const dirty = git(
      'status',
      '--porcelain',
      '--',
      'lib',
      'bench/protection',
      ':!bench/protection/charts',
    );
    return `${git('rev-parse', '--short', 'HEAD')}${dirty === '' ? '' : ' (with uncommitted changes)'}`;
  } catch {
    return 'unknown';
  }
}

const started = Date.now();
const commit = commitOf();
const results = await limitBenchmark(core, {
  seed,
  log: (section) => process.stdout.write(`${section} `),
});
const chartsDir = new URL('../charts/', import.meta.url);
mkdirSync(chartsDir, { recursive: true });
for (const [name, svg] of Object.entries(results.charts)) {
  writeFileSync(new URL(name, chartsDir), svg);
}
const page = resultsPage(results, {
  seed,
  commit,
  engine: coreFile === undefined ? undefined : (option('--core-label') ?? coreFile),
  node: process.version,
  wallS: fixed((Date.now() - started) / 1000),
});
const file = fileURLToPath(new URL('../../LIMIT-RESULTS.md', import.meta.url));
writeFileSync(file, page);
process.stdout.write(`\nwrote ${file}\n`);
