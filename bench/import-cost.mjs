// What importing the package costs at start-up, once Nest's own import is done:
//
//   npm run build && node bench/import-cost.mjs [rounds] [baseline checkout] [entries]
//
// `entries` is a comma-separated list of subpaths (`.,./core`) to time; all of
// them by default.
// e.g. `node bench/import-cost.mjs 20 /work/main` (a checkout with its own
// `npm run build` done) puts that build's figures beside this one's, in the same
// interleaved rounds, with the ratio of the two.
//
// Every sample is a fresh `node` process that imports reflect-metadata, rxjs,
// @nestjs/common and @nestjs/core first (what any Nest application has loaded
// before it reaches us), then times `await import(entry)` with performance.now():
// module resolution, reading, compiling and evaluating our graph and whatever
// it imports that Nest did not. The rounds alternate over every case, in a
// freshly shuffled order each, so that a busy moment of a shared machine falls
// on all of them alike. Reported: the median and p25-p75 over the rounds, the
// number of the package's own modules the entry loads (its static import graph
// in dist/, counted from the files), and the ratio of each median to opossum's
// and cockatiel's (imported the same way from node_modules).

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, quantile, seededRandom } from './harness.mjs';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.argv[2] ?? 20);
const baseline = process.argv[3] ? resolve(process.argv[3]) : undefined;
const only = process.argv[4]?.split(',');

const WARM = ['reflect-metadata', 'rxjs', '@nestjs/common', '@nestjs/core'];
const CHILD = `
${WARM.map((name) => `await import(${JSON.stringify(name)});`).join('\n')}
const started = performance.now();
await import(process.argv[1]);
process.stdout.write(String(performance.now() - started));
`;

/** The package's entry points of a checkout: subpath -> file URL of its JS. */
function entriesOf(root) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === 'object')
    .map(([subpath, target]) => ({ subpath, file: join(root, target.default) }));
}

/** The package's own modules an entry loads: its static import graph in dist/. */
function graphOf(entry) {
  const seen = new Set([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop();
    const text = readFileSync(file, 'utf8');
    const specifiers = [
      ...text.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/gm),
      ...text.matchAll(/^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm),
    ].map((m) => m[1]);
    for (const specifier of specifiers) {
      const target = resolve(dirname(file), specifier);
      if (!seen.has(target) && existsSync(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return seen.size;
}

/** One fresh process; it resolves Nest from `cwd`, as the build it times does. */
function sample({ target, cwd }) {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, target], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (result.status !== 0) throw new Error(`importing ${target} failed:\n${result.stderr}`);
  return Number(result.stdout);
}

const cases = [];
for (const [label, root] of [['this build', here], ...(baseline ? [['baseline', baseline]] : [])]) {
  const main = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).main;
  if (!existsSync(join(root, main)))
    throw new Error(`${join(root, main)} is missing: run \`npm run build\` there first`);
  for (const { subpath, file } of entriesOf(root)) {
    if (only && !only.includes(subpath)) continue;
    const target = pathToFileURL(file).href;
    cases.push({ label, name: subpath, target, cwd: root, modules: graphOf(file) });
  }
}
for (const name of ['opossum', 'cockatiel']) {
  if (existsSync(join(here, 'node_modules', name, 'package.json')))
    cases.push({ label: 'peer', name, target: name, cwd: here, modules: undefined });
}

const random = seededRandom(29);
const times = new Map(cases.map((c) => [c, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = cases.slice();
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (const c of order) times.get(c).push(sample(c));
  process.stderr.write(`\rround ${round + 1}/${ROUNDS}`);
}
process.stderr.write('\n');

const medianOf = (name) => {
  const c = cases.find((x) => x.name === name);
  return c ? median(times.get(c)) : undefined;
};
const opossum = medianOf('opossum');
const cockatiel = medianOf('cockatiel');
const ms = (value) => (value === undefined ? '-' : value.toFixed(1));
const ratio = (a, b) => (a === undefined || b === undefined ? '-' : `${(a / b).toFixed(2)}x`);
console.log(
  `import cost after Nest's own import, ${ROUNDS} fresh processes per case, Node ${process.version}\n`,
);
console.log(
  '| entry | build | own modules | median ms | p25-p75 ms | vs baseline | vs opossum | vs cockatiel |',
);
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const c of cases) {
  const t = times.get(c);
  const m = median(t);
  const base =
    c.label === 'this build'
      ? cases.find((x) => x.label === 'baseline' && x.name === c.name)
      : undefined;
  console.log(
    `| \`${c.name}\` | ${c.label} | ${c.modules ?? '-'} | ${ms(m)} | ${ms(quantile(t, 0.25))}-${ms(quantile(t, 0.75))} | ${base ? ratio(m, median(times.get(base))) : '-'} | ${ratio(m, opossum)} | ${ratio(m, cockatiel)} |`,
  );
}
