#!/usr/bin/env node
// Checks the package as a consumer gets it: `npm pack`, install the tarball into a
// throwaway app, then load it from ESM and from CommonJS (Node's require(esm)), load
// the `./core` and `./dashboard` subpaths, and make sure nothing reachable from the root entry (its JS
// import graph and the emitted .d.ts files) references an optional peer. Make sure
// the published types carry no internals (`stripInternal`): no `@internal` tag left
// in any .d.ts, and none of the engine's known internal members (`settle()`,
// `withdrawAdmission()`, ...) declared anywhere. Then type-check every .d.ts of the
// tarball on its own (a public declaration that refers to a stripped one breaks
// here), and a Nest consumer of every entry point, as applications really compile:
// CommonJS with TypeScript 5.9 under `moduleResolution: node10` (the classic Nest
// tsconfig, which reads `typesVersions`, not `exports`) and `nodenext`, and this
// repo's TypeScript 7 under `nodenext`; ESM (`.mts`) with TypeScript 5.9 and 7 under
// `nodenext`, and TypeScript 7 under `bundler`.
//
// Before installing: package.json has its repository, homepage and bugs; every
// file of the tarball is of a kind listed in SHIPPED_KINDS, with the reason users
// need it (no sources, no maps, no docs); every relative link and image of a
// shipped Markdown file resolves to a shipped file, and every absolute link into
// the repository to a file git tracks (these are reported first and fail last).
//
// It does not build: run `npm run build` first. Only the TypeScript 5.9 consumer
// needs the network (or npm's cache): it installs `typescript@5.9.3` itself, so
// this repo keeps its own TypeScript. The tarball has no dependencies, and the
// peers are symlinked from this repo's node_modules after npm has finished (npm
// would prune links it did not make).
//
// Usage: node tools/pack-check.mjs   (or `npm run test:pack`)

import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownLinkProblems } from './pack-links.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();

/**
 * Optional peers: the root entry must never reach them, in JS or in types. A name
 * ending in `/` is a scope; peers marked optional in package.json's
 * peerDependenciesMeta are added at run time.
 */
const OPTIONAL_PEERS = [
  '@nestjs/terminus',
  'prom-client',
  '@opentelemetry/',
  'ioredis',
  '@nestjs/microservices',
  '@nestjs/websockets',
  '@nestjs/graphql',
  'graphql',
];
/** dist/ folders of the optional integrations (their own subpath exports); not scanned. */
const INTEGRATION_DIRS = [
  'terminus',
  'prometheus',
  'opentelemetry',
  'redis',
  'microservices',
  'websockets',
  'graphql',
  'grpc',
  'undici',
  'axios',
];
/**
 * Members of the engine that are `@internal`: a consumer's autocomplete must never
 * offer them, so no published .d.ts may declare them (a `private` member, which tsc
 * emits as a bare name, is fine). Old names stay listed after a rename.
 */
const KNOWN_INTERNALS = [
  'settle',
  'settleValue',
  'classifyError',
  'attachProbe',
  'unadmit',
  'withdrawAdmission',
  'admitAsFamily',
  'onChildTransition',
  'holdFault',
  'dropFault',
  'storedState', // renamed lastDecidedState, which is public: custom coordinators read it (CoordinatedBreaker)
];
/** The TypeScript of consumers still on the 5.x line (node10 resolution is gone from 6 on). */
const CONSUMER_TYPESCRIPT = '5.9.3';

class CheckError extends Error {}

const fail = (message) => {
  throw new CheckError(message);
};
const ok = (what, detail = '') => console.log(`ok  ${what}${detail ? ` (${detail})` : ''}`);
const note = (message) => console.log(`note ${message}`);

// ---------------------------------------------------------------- processes

/** Runs npm the way the surrounding `npm run` did, or from PATH when run directly. */
function npm(args, cwd) {
  const execpath = process.env.npm_execpath;
  const [cmd, argv] =
    execpath && /\.[cm]?js$/.test(execpath)
      ? [process.execPath, [execpath, ...args]]
      : ['npm', args];
  const result = spawnSync(cmd, argv, {
    cwd,
    encoding: 'utf8',
    shell: process.platform === 'win32' && cmd === 'npm',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) fail(`could not run npm ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) {
    fail(
      `npm ${args.join(' ')} exited ${result.status}\n${result.stdout}\n${result.stderr}`.trimEnd(),
    );
  }
  return result.stdout;
}

/** Runs a TypeScript compiler on a project; resolves with its exit status and output. */
function tsc(compiler, project, cwd) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [compiler, '-p', project, '--pretty', 'false'], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill(), 180_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ status: error.message, output });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ status: code ?? signal, output: output.trim() });
    });
  });
}

/** Runs a probe script with a clean NODE_OPTIONS; returns its stdout and stderr. */
function node(file, cwd) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const result = spawnSync(process.execPath, [file], {
    cwd,
    encoding: 'utf8',
    env,
    timeout: 30_000,
  });
  if (result.error) fail(`could not run ${file}: ${result.error.message}`);
  return {
    status: result.status ?? result.signal,
    stdout: result.stdout.trim(),
    stderr: result.stderr.trim(),
  };
}

// ---------------------------------------------------------------- lexing
// Enough of a JS/TS lexer to find module specifiers without being fooled by
// comments, strings, template literals or regular expressions (tsc output is
// regular, but its error messages are full of quotes and it has regexes).

const REGEX_PREFIX = new Set([
  '(',
  ',',
  '=',
  ':',
  '[',
  '!',
  '&',
  '|',
  '?',
  '{',
  '}',
  ';',
  '+',
  '-',
  '*',
  '%',
  '<',
  '>',
  '~',
  '^',
  '',
]);
const REGEX_KEYWORDS = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
]);

/**
 * Returns the code with comments dropped, regexes and template text blanked, and
 * every quoted string replaced by `"#N"`, where `strings[N]` is its content: so
 * `import 'x'` written inside a string or a comment can never look like an import.
 */
function tokenize(text) {
  const strings = [];
  let code = '';
  let i = 0;
  let last = ''; // last significant character ('a' for any identifier character)
  let word = ''; // the identifier that ends right before `i`, if any
  const braces = []; // one per open template `${`: brace depth inside it
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
      code += ' ';
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      code += `${c}#${strings.length}${c}`;
      strings.push(text.slice(i + 1, j));
      i = j + 1;
      last = c;
      word = '';
      continue;
    }
    if (c === '`' || (c === '}' && braces.length > 0 && braces.at(-1) === 0)) {
      // start of a template, or back in one after a `${ ... }`
      if (c === '}') braces.pop();
      let j = i + 1;
      while (j < text.length && text[j] !== '`' && !(text[j] === '$' && text[j + 1] === '{')) {
        j += text[j] === '\\' ? 2 : 1;
      }
      if (text[j] === '$') {
        braces.push(0);
        code += ' (';
        i = j + 2;
        last = '(';
      } else {
        code += ' ';
        i = j + 1;
        last = '`';
      }
      word = '';
      continue;
    }
    if (c === '/' && (REGEX_PREFIX.has(last) || REGEX_KEYWORDS.has(word))) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n' && (inClass || text[j] !== '/')) {
        if (text[j] === '\\') j += 1;
        else if (text[j] === '[') inClass = true;
        else if (text[j] === ']') inClass = false;
        j += 1;
      }
      code += ' /re/ ';
      i = j + 1;
      last = '/';
      word = '';
      continue;
    }
    if (braces.length > 0 && c === '{') braces[braces.length - 1] += 1;
    if (braces.length > 0 && c === '}') braces[braces.length - 1] -= 1;
    if (/[\w$]/.test(c)) word = /[\w$]/.test(text[i - 1] ?? '') ? word + c : c;
    else if (!/\s/.test(c)) word = '';
    if (!/\s/.test(c)) last = /[\w$]/.test(c) ? 'a' : c;
    code += c;
    i += 1;
  }
  return { code, strings };
}

/** Module specifiers a JS or .d.ts file refers to (imports, re-exports, import types, references). */
function specifiersOf(text) {
  const found = new Set();
  for (const m of text.matchAll(/^\/\/\/\s*<reference\s+(?:types|path)\s*=\s*(["'])(.*?)\1/gm))
    found.add(m[2]);
  const { code, strings } = tokenize(text);
  const S = `(["'])#(\\d+)\\1`; // a string placeholder; group 2 is its index
  const patterns = [
    `\\b(?:import|export)\\b[^'";]*?\\bfrom\\s*${S}`, // import x from 'y', export * from 'y'
    `\\bimport\\s*${S}`, // import 'y'
    `\\bimport\\s*\\(\\s*${S}\\s*[,)]`, // import('y'), import("y").T
    `\\brequire\\s*\\(\\s*${S}\\s*\\)`, // require('y')
    `\\bdeclare\\s+module\\s+${S}`, // declare module 'y' (augmentation)
  ];
  for (const pattern of patterns) {
    for (const m of code.matchAll(new RegExp(pattern, 'g'))) found.add(strings[Number(m[2])]);
  }
  return [...found];
}

const packageName = (spec) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');
const isRelative = (spec) => spec.startsWith('./') || spec.startsWith('../');
const optionalPeerOf = (spec) =>
  OPTIONAL_PEERS.find((peer) =>
    peer.endsWith('/') ? spec.startsWith(peer) : spec === peer || spec.startsWith(`${peer}/`),
  );

// ---------------------------------------------------------------- checks

function checkDistBuilt() {
  if (!existsSync(join(repo, 'dist', 'bundle', 'index.js'))) {
    fail('dist/bundle/index.js is missing: run `npm run build` first (pack-check does not build)');
  }
}

function pack(into) {
  const out = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', into], repo);
  let info;
  try {
    info = JSON.parse(out)[0];
  } catch {
    fail(`could not read the output of npm pack --json:\n${out}`);
  }
  const tarball = join(into, info.filename);
  if (!existsSync(tarball))
    fail(`npm pack said it wrote ${info.filename}, but ${tarball} is not there`);
  ok(
    'npm pack',
    `${info.filename}, ${info.entryCount} files, ${kB(info.size)} packed, ${kB(info.unpackedSize)} unpacked`,
  );
  return { tarball, files: info.files };
}

const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;

/**
 * Every kind of file the tarball holds, with the reason a user needs it. A file of
 * no listed kind fails the check: TypeScript sources, source maps and declaration
 * maps (which point to sources that are not shipped, so a debugger or an editor gets
 * nothing from them) and images stay in the repository, where the README's links
 * point. The docs pages ship: the README's and the CHANGELOG's links to them then
 * work from node_modules too, in the version installed.
 */
const SHIPPED_KINDS = [
  [
    'dist/bundle/**/*.js',
    /^dist\/bundle\/.*\.js$/,
    'the code: one module per entry point and the chunks they share (tools/bundle.mjs)',
  ],
  ['dist/**/*.d.ts', /^dist\/.*\.d\.ts$/, 'the types of every entry point'],
  ['package.json', /^package\.json$/, 'exports, peers, engines'],
  ['README.md', /^README\.md$/, "npm's page and the way into the docs"],
  ['CHANGELOG.md', /^CHANGELOG\.md$/, 'what changed, and the old name of each rename'],
  [
    'docs/*.md',
    /^docs\/[^/]+\.md$/,
    'the docs pages the README and the CHANGELOG link to, for the version installed',
  ],
  [
    'lib/redis/README.md',
    /^lib\/redis\/README\.md$/,
    "the Redis store's set-up page, which the docs link to",
  ],
  ['LICENSE', /^LICENSE$/, 'the MIT licence asks for its notice in every copy'],
  [
    'operator/*',
    /^operator\/[^/]+\.(json|yml)$/,
    'the Grafana dashboard, the alert rules and their promtool test, used by path',
  ],
];

function checkShippedKinds(files) {
  const kinds = SHIPPED_KINDS.map(([name, , why]) => ({ name, why, count: 0, bytes: 0 }));
  const strays = [];
  for (const { path, size } of files) {
    const index = SHIPPED_KINDS.findIndex(([, pattern]) => pattern.test(path));
    if (index === -1) strays.push(path);
    else {
      kinds[index].count += 1;
      kinds[index].bytes += size;
    }
  }
  if (strays.length > 0) {
    fail(
      `the tarball holds files of no kind listed in SHIPPED_KINDS (tools/pack-check.mjs); ship them only with a reason, or leave them out of package.json "files":\n  ${strays.slice(0, 20).join('\n  ')}${strays.length > 20 ? `\n  ... and ${strays.length - 20} more` : ''}`,
    );
  }
  ok(
    'every shipped file has a reason',
    kinds.map(({ name, count, bytes }) => `${name}: ${count}, ${kB(bytes)}`).join('; '),
  );
}

function install(tarball, app, pkg) {
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'pack-check-app', version: '0.0.0', private: true }, null, 2)}\n`,
  );
  // --legacy-peer-deps keeps npm from resolving the peers at all (--omit=peer still
  // fetches their manifests); --prefer-offline keeps any real dependency off the network.
  npm(
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--no-package-lock',
      '--legacy-peer-deps',
      '--prefer-offline',
      tarball,
    ],
    app,
  );
  const installed = join(app, 'node_modules', pkg.name);
  if (!existsSync(join(installed, 'package.json')))
    fail(`npm install did not put ${pkg.name} in ${app}/node_modules`);

  // Required peers: link the repo's own copies, now that npm is done. Optional
  // peers are left out, so that loading the root proves it does not need them.
  const peers = Object.keys(pkg.peerDependencies ?? {}).filter((name) => !optionalPeerOf(name));
  for (const name of peers) {
    const target = join(repo, 'node_modules', name);
    if (!existsSync(join(target, 'package.json'))) {
      fail(
        `peer ${name} is not installed in ${relative(process.cwd(), join(repo, 'node_modules'))}: run \`npm ci\``,
      );
    }
    const link = join(app, 'node_modules', name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(target, link, 'junction');
  }
  ok('npm install tarball', `peers linked: ${peers.join(', ') || 'none'}`);
  return installed;
}

/** Files the package ships for operators and documents by path: `files` in package.json must keep them. */
const OPERATOR_ASSETS = ['operator/grafana-dashboard.json', 'operator/prometheus-alerts.yml'];

function checkOperatorAssets(installed) {
  const missing = OPERATOR_ASSETS.filter((file) => !existsSync(join(installed, file)));
  if (missing.length > 0)
    fail(
      `the tarball lacks the operator assets ${missing.join(', ')}: is "operator" in package.json "files"?`,
    );
  JSON.parse(readFileSync(join(installed, OPERATOR_ASSETS[0]), 'utf8'));
  ok('operator assets present', OPERATOR_ASSETS.join(', '));
}

/**
 * What npm's page and `npm bugs`/`npm repo`/`npm home` read: without them the
 * package page has no link back to the source, the issues or the docs.
 */
function checkMetadata(pkg) {
  const url = (value) => (typeof value === 'string' ? value : value?.url);
  const problems = [];
  const repository = url(pkg.repository);
  if (!/^git\+https:\/\/\S+\.git$/.test(repository ?? ''))
    problems.push(
      `"repository" should be { "type": "git", "url": "git+https://….git" }, not ${JSON.stringify(pkg.repository)}`,
    );
  if (!/^https:\/\/\S+$/.test(pkg.homepage ?? ''))
    problems.push(`"homepage" should be an https URL, not ${JSON.stringify(pkg.homepage)}`);
  if (!/^https:\/\/\S+$/.test(url(pkg.bugs) ?? ''))
    problems.push(`"bugs" should be an https URL or { "url" }, not ${JSON.stringify(pkg.bugs)}`);
  if (problems.length > 0) fail(`package.json lacks its links:\n  ${problems.join('\n  ')}`);
  ok('repository, homepage and bugs set', repository);
}

function checkExportTargets(installed, pkg) {
  const targets = [];
  const walk = (value) => {
    if (typeof value === 'string') targets.push(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(pkg.exports);
  if (pkg.main) targets.push(pkg.main);
  if (pkg.types) targets.push(pkg.types);
  const missing = [...new Set(targets)].filter((target) => !existsSync(join(installed, target)));
  if (missing.length > 0)
    fail(`the tarball lacks files that package.json points to: ${missing.join(', ')}`);
  ok('exports targets present', `${new Set(targets).size} paths`);
}

/**
 * Runs a probe, which prints `ok  <check>` per check it passed; its output is passed
 * on. Anything on stderr of a passing probe (e.g. an ExperimentalWarning) is a note.
 */
function probe(app, file, source, checks) {
  writeFileSync(join(app, file), source);
  const { status, stdout, stderr } = node(file, app);
  if (stdout) console.log(stdout);
  const passed = stdout.split('\n').filter((line) => line.startsWith('ok  ')).length;
  if (status !== 0 || passed !== checks) {
    fail(
      `${file} (check ${passed + 1} of ${checks}) exited ${status}:\n${stderr || '(nothing on stderr)'}`,
    );
  }
  if (stderr) note(`${file} printed on stderr: ${stderr.split('\n')[0]}`);
}

const ASSERTIONS = `
function check(m, where) {
  for (const name of ['Breaker', 'CallRejectedError', 'isCallRejected']) {
    if (typeof m[name] !== 'function') throw new Error(where + ': export ' + name + ' is ' + typeof m[name]);
  }
}
async function run(m, where) {
  check(m, where);
  const value = await new m.Breaker('x').execute(() => 1);
  if (value !== 1) throw new Error(where + ': new Breaker("x").execute(() => 1) resolved to ' + String(value));
}
`;

const ESM_PROBE = `${ASSERTIONS}
const root = await import('nestjs-circuit-breaker');
await run(root, 'esm import');
console.log('ok  esm import');
const core = await import('nestjs-circuit-breaker/core');
await run(core, 'esm import ./core');
if (core.Breaker !== root.Breaker) throw new Error('./core and the root export different Breaker classes');
console.log('ok  esm import ./core');
// lib/index.ts lists the engine's names one by one: none may be forgotten, except the values
// kept in ./core on purpose (what builds a breaker outside Nest: a Nest user never names them).
const CORE_ONLY = ['BREAKER_EVENT_NAMES', 'BREAKER_STATES', 'HealthCheckScheduler', 'systemClock'];
const missing = Object.keys(core).filter((name) => !CORE_ONLY.includes(name) && root[name] !== core[name]);
if (missing.length > 0) throw new Error('the root does not re-export these values of ./core: ' + missing.join(', '));
const leaked = CORE_ONLY.filter((name) => name in root);
if (leaked.length > 0) throw new Error('the root re-exports values kept in ./core only: ' + leaked.join(', '));
const absent = CORE_ONLY.filter((name) => !(name in core));
if (absent.length > 0) throw new Error('./core lacks values it keeps on purpose: ' + absent.join(', '));
console.log('ok  the root re-exports every value of ./core but ' + CORE_ONLY.join(', ') + ' (' + Object.keys(core).length + ')');
// Loaded without any optional peer installed: it needs nothing beyond Nest and RxJS.
const dashboard = await import('nestjs-circuit-breaker/dashboard');
const mounted = dashboard.CircuitBreakerDashboardModule.forRoot({ control: true, guard: () => true });
if (mounted.controllers?.length !== 2) throw new Error('./dashboard forRoot({ control: true }) made ' + mounted.controllers?.length + ' controllers, not 2');
console.log('ok  esm import ./dashboard (no optional peer)');
// The testing kit: its manual clock drives a breaker's deadline, with no real time passing.
const testing = await import('nestjs-circuit-breaker/testing');
const clock = new testing.ManualClock();
const hung = new root.Breaker('kit', { timeoutMs: 1000 }, { clock }).execute(() => new Promise(() => {})).catch((e) => e);
clock.advance(1000);
if (!((await hung) instanceof root.CallTimeoutError)) throw new Error('./testing: the ManualClock did not drive the deadline');
if (typeof testing.CircuitBreakerTestingModule?.forRoot !== 'function') throw new Error('./testing: no CircuitBreakerTestingModule');
console.log('ok  esm import ./testing');
`;

const CJS_PROBE = `${ASSERTIONS}
(async () => {
  const root = require('nestjs-circuit-breaker');
  await run(root, 'cjs require');
  console.log('ok  cjs require (require(esm))');
  const core = require('nestjs-circuit-breaker/core');
  await run(core, 'cjs require ./core');
  if (core.Breaker !== root.Breaker) throw new Error('./core and the root export different Breaker classes');
  console.log('ok  cjs require ./core');
  const dashboard = require('nestjs-circuit-breaker/dashboard');
  if (typeof dashboard.CircuitBreakerDashboardModule?.forRoot !== 'function') throw new Error('./dashboard has no CircuitBreakerDashboardModule.forRoot');
  console.log('ok  cjs require ./dashboard');
})().catch((error) => {
  console.error(error && error.code === 'ERR_REQUIRE_ESM'
    ? 'require(esm) is not available in this Node (' + process.version + '): it needs 20.19+, 22.12+ or 24+'
    : error);
  process.exitCode = 1;
});
`;

function listFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

function checkTypes(installed) {
  const dist = join(installed, 'dist');
  const isIntegration = (file) =>
    relative(dist, file)
      .split(sep)
      .some((part) => INTEGRATION_DIRS.includes(part));
  const files = listFiles(dist).filter(
    (file) => /\.d\.[cm]?ts$/.test(file) && !isIntegration(file),
  );
  const offenders = [];
  for (const file of files) {
    for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
      if (optionalPeerOf(spec)) offenders.push(`${relative(installed, file)} refers to '${spec}'`);
    }
  }
  if (offenders.length > 0) {
    fail(
      `type declarations outside the integration folders refer to optional peers:\n  ${offenders.join('\n  ')}`,
    );
  }
  ok('types free of optional peers', `${files.length} .d.ts files`);
}

/** The code of a .d.ts without its comments, so that prose about a member never counts as declaring it. */
const withoutComments = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

/**
 * `stripInternal` at work: no declaration tagged `@internal` is left in the
 * published types (the tag only survives where tsc did not strip, for example
 * in a comment that is not the declaration's leading JSDoc), and no known
 * internal member of the engine is declared, unless `private`.
 */
function checkNoInternals(installed) {
  const files = listFiles(join(installed, 'dist')).filter((file) => /\.d\.[cm]?ts$/.test(file));
  const problems = [];
  const member = new RegExp(`^(.*?)\\b(${KNOWN_INTERNALS.join('|')})\\b\\s*([?!]?\\s*[(:<;]|$)`);
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const where = relative(installed, file);
    text.split('\n').forEach((line, i) => {
      if (/@internal\b/.test(line))
        problems.push(`${where}:${i + 1} keeps an @internal declaration: ${line.trim()}`);
    });
    withoutComments(text)
      .split('\n')
      .forEach((line) => {
        const m = member.exec(line);
        if (m && !/\b(?:private|protected)\b|#/.test(m[1]))
          problems.push(`${where} declares internal member ${m[2]}: ${line.trim()}`);
      });
  }
  if (problems.length > 0) {
    fail(
      `internals leak into the published types (is stripInternal on in tsconfig.build.json? is the member tagged @internal?):\n  ${problems.join('\n  ')}`,
    );
  }
  ok(
    'types free of internals',
    `${files.length} .d.ts files, no @internal, none of ${KNOWN_INTERNALS.length} known internal members`,
  );
}

function checkImportGraph(installed, pkg) {
  const entry = join(installed, pkg.exports['.'].default);
  const base = dirname(entry); // where the subpaths' folders are: dist/bundle/dashboard, ...
  const declared = new Set([
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
  ]);
  const seen = new Map([[entry, null]]); // file -> the file that first imported it
  const queue = [entry];
  const bare = new Set();
  const problems = [];
  const chain = (file) => {
    const parts = [];
    for (let at = file; at; at = seen.get(at)) parts.unshift(relative(installed, at));
    return parts.join(' -> ');
  };
  while (queue.length > 0) {
    const file = queue.shift();
    for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
      if (isRelative(spec)) {
        const target = resolve(dirname(file), spec);
        if (relative(base, target).split(sep)[0] === 'dashboard')
          problems.push(`${chain(file)} imports '${spec}': the dashboard is an optional subpath`);
        if (!existsSync(target))
          problems.push(`${chain(file)} imports '${spec}', which is not in the tarball`);
        else if (relative(base, target).split(sep)[0] === 'testing')
          problems.push(
            `${chain(file)} imports the testing kit ('${spec}'): only tests may load it`,
          );
        else if (!seen.has(target)) {
          seen.set(target, file);
          queue.push(target);
        }
      } else if (optionalPeerOf(spec)) {
        problems.push(`${chain(file)} imports optional peer '${spec}'`);
      } else if (!spec.startsWith('node:')) {
        bare.add(spec);
        if (!declared.has(packageName(spec))) {
          problems.push(
            `${chain(file)} imports '${spec}', which is neither a dependency nor a peer`,
          );
        }
      }
    }
  }
  if (problems.length > 0)
    fail(`the root entry's import graph is wrong:\n  ${problems.join('\n  ')}`);
  ok(
    'root import graph free of optional peers',
    `${seen.size} files, bare imports: ${[...bare].toSorted().join(', ') || 'none'}`,
  );
}

/**
 * `typesVersions` is all that node10 resolution reads for a subpath: every
 * `exports` subpath with types must be mapped there, to the same file.
 */
function checkTypesVersions(pkg) {
  const mapped = pkg.typesVersions?.['*'] ?? {};
  const problems = [];
  let count = 0;
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    const types = typeof target === 'object' && target !== null ? target.types : undefined;
    if (subpath === '.' || types === undefined) continue;
    count++;
    const name = subpath.replace(/^\.\//, '');
    const paths = mapped[name];
    if (
      !Array.isArray(paths) ||
      paths.length !== 1 ||
      paths[0].replace(/^\.\//, '') !== types.replace(/^\.\//, '')
    ) {
      problems.push(
        `"${name}": ${JSON.stringify(paths)} should be ["${types}"] (exports["${subpath}"].types)`,
      );
    }
  }
  if (problems.length > 0) {
    fail(
      `package.json typesVersions["*"] does not map every subpath to its types (moduleResolution node10 reads only typesVersions):\n  ${problems.join('\n  ')}`,
    );
  }
  ok('typesVersions maps every subpath', `${count} subpaths`);
}

/** A CommonJS Nest application that uses every entry point; the @ts-expect-error lines prove each entry's types are real, not `any`. */
const CONSUMER_SOURCE = `import 'reflect-metadata';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Breaker, CircuitBreaker, CircuitBreakerModule, isCallRejected, type BreakerSnapshot } from 'nestjs-circuit-breaker';
import { Breaker as CoreBreaker } from 'nestjs-circuit-breaker/core';
import { CircuitBreakerHealthIndicator, CircuitBreakerHealthModule } from 'nestjs-circuit-breaker/terminus';
import { CIRCUIT_BREAKER_METRIC_NAMES, CircuitBreakerMetricsModule } from 'nestjs-circuit-breaker/prometheus';
import { CIRCUIT_BREAKER_INSTRUMENTS, CircuitBreakerTelemetryModule } from 'nestjs-circuit-breaker/opentelemetry';
import { REDIS_BREAKER_STORE_DEFAULTS, RedisBreakerStore, type RedisBreakerStoreOptions } from 'nestjs-circuit-breaker/redis';
import { CircuitBreakerRpcExceptionFilter, classifyGrpcError, classifyRpcError, toRpcException } from 'nestjs-circuit-breaker/microservices';
import { CircuitBreakerWsExceptionFilter, toWsException } from 'nestjs-circuit-breaker/websockets';
import { CircuitBreakerGraphQLExceptionFilter, classifyGraphQLResult, toGraphQLError } from 'nestjs-circuit-breaker/graphql';
import { CircuitBreakerGuard, RequireCircuitBreaker, UseCircuitBreaker, type AdmissionPeek, type CircuitBreakerErrorPayload } from 'nestjs-circuit-breaker';
import { CircuitBreakerDashboardModule, type DashboardState } from 'nestjs-circuit-breaker/dashboard';
import { CircuitBreakerTester, CircuitBreakerTestingModule, ManualClock, type BreakerDescriptor } from 'nestjs-circuit-breaker/testing';
import { GrpcStatusError, withCircuitBreaker, type GrpcRequest } from 'nestjs-circuit-breaker/grpc';

@Injectable()
export class CatalogService {
  @CircuitBreaker({ name: 'catalog', fallback: { lastGood: { maxAgeMs: 60_000 } } })
  async product(id: string): Promise<string> {
    return id;
  }
}

@Module({
  imports: [
    CircuitBreakerModule.forRoot({ breakers: { catalog: { timeoutMs: 1_000 } } }),
    CircuitBreakerHealthModule,
    CircuitBreakerMetricsModule.forRoot({ prefix: 'shop_' }),
    CircuitBreakerTelemetryModule.forRoot({ keyAttribute: false }),
    CircuitBreakerDashboardModule.forRoot({ path: 'ops/breakers', guard: () => true, control: true }),
  ],
  providers: [CatalogService],
})
export class AppModule {}

export const breaker: CoreBreaker = new Breaker('payments', { failureRateThreshold: 0.5 });
export const snapshot: BreakerSnapshot = breaker.snapshot();
export const metrics: DynamicModule = CircuitBreakerMetricsModule.forRoot({ keyLabel: true });
export const names: string[] = [CIRCUIT_BREAKER_METRIC_NAMES.calls, CIRCUIT_BREAKER_INSTRUMENTS.calls];
export const flushMs: number = REDIS_BREAKER_STORE_DEFAULTS.operationTimeoutMs;
export const rejected: boolean = isCallRejected(new Error('x'));
export function ready(indicator: CircuitBreakerHealthIndicator) {
  return indicator.isHealthy('circuit_breakers', { openStatus: 'degraded' });
}
export function store(options: RedisBreakerStoreOptions): RedisBreakerStore {
  return new RedisBreakerStore(options);
}

@RequireCircuitBreaker('catalog', { name: 'hosts', key: (context) => context.getType() })
export class FanOutController {
  @UseCircuitBreaker('catalog', { fallback: (error, context) => ({ error, type: context.getType() }) })
  list(): string[] {
    return [];
  }
}
export const guard = CircuitBreakerGuard.requiring('catalog');
export const peeked: AdmissionPeek = breaker.peek();
export const permitted: boolean = breaker.isCallPermitted();
export const payload: CircuitBreakerErrorPayload | undefined = toRpcException(new Error('x'))?.getError() as CircuitBreakerErrorPayload | undefined;
export const ws = toWsException(new Error('x'));
export const gql = toGraphQLError(new Error('x'))?.extensions;
export const transportFilters = [new CircuitBreakerRpcExceptionFilter(), new CircuitBreakerWsExceptionFilter(), new CircuitBreakerGraphQLExceptionFilter({ details: true })];
export const grpcInterceptor = withCircuitBreaker({ breaker, skip: (request: GrpcRequest) => request.method === '/grpc.health.v1.Health/Check' });
export const isGrpcFailure = (error: unknown): boolean => error instanceof GrpcStatusError;
// @ts-expect-error ./grpc's types: skip is a function of the request
withCircuitBreaker({ breaker, skip: true });
export const outcomes = [classifyRpcError(new Error('x')), classifyGrpcError({ code: 14, details: 'unavailable' }), classifyGraphQLResult({ errors: [] })];

// @ts-expect-error ./microservices's types: the second argument is the overload switch
classifyGrpcError({}, 'yes');
// @ts-expect-error ./graphql's types: details is a boolean
new CircuitBreakerGraphQLExceptionFilter({ details: 'yes' });
// @ts-expect-error the root's types: a required circuit is a name or { name, key? }
RequireCircuitBreaker(42);
// @ts-expect-error the root's types: failureRateThreshold is a number
new Breaker('x', { failureRateThreshold: 'half' });
// @ts-expect-error ./core's types: a breaker needs a name
new CoreBreaker();
// @ts-expect-error ./terminus's types: openStatus is 'down' or 'degraded'
export const wrongStatus = (indicator: CircuitBreakerHealthIndicator) => indicator.isHealthy('k', { openStatus: 'sideways' });
// @ts-expect-error ./prometheus's types: prefix is a string
CircuitBreakerMetricsModule.forRoot({ prefix: 1 });
// @ts-expect-error ./opentelemetry's types: keyAttribute is a boolean
CircuitBreakerTelemetryModule.forRoot({ keyAttribute: 'yes' });
export const tiles = (state: DashboardState): number => state.breakers.length;
// @ts-expect-error ./dashboard's types: control is a boolean
CircuitBreakerDashboardModule.forRoot({ control: 'yes' });
// @ts-expect-error ./redis's types: the store needs a client
new RedisBreakerStore({});
export const testingModule: DynamicModule = CircuitBreakerTestingModule.forRoot({ clock: new ManualClock(0), breakers: { catalog: {} } });
export function described(tester: CircuitBreakerTester): BreakerDescriptor {
  return tester.describe('catalog');
}
// @ts-expect-error ./testing's types: the clock is a ManualClock
CircuitBreakerTestingModule.forRoot({ clock: Date });
// @ts-expect-error stripInternal: the engine's settle() is not in the published types
breaker.settle;
// @ts-expect-error stripInternal: withdrawAdmission() is not in the published types
breaker.withdrawAdmission;
// @ts-expect-error stripInternal: unadmit() (its old name) is not either
breaker.unadmit;
`;

const CONSUMER_COMPILER_OPTIONS = {
  target: 'ES2021',
  module: 'commonjs',
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  skipLibCheck: false,
  noEmit: true,
  types: ['node'],
};

/**
 * Type-checks CONSUMER_SOURCE as a CommonJS application (main.ts; the package.json
 * has no "type") with TypeScript 5.9 under node10 and nodenext resolution, and with
 * this repo's TypeScript under nodenext (it has no node10); as an ES module
 * (main.mts) with both under nodenext, and this repo's under bundler. First, every
 * .d.ts of the tarball on its own, with this repo's TypeScript: a public
 * declaration that refers to one `stripInternal` removed fails there even if no
 * consumer reaches it.
 */
async function checkTypeScriptConsumers(tarball, work, pkg) {
  const app = join(work, 'ts-app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'pack-check-ts-app', version: '0.0.0', private: true }, null, 2)}\n`,
  );
  npm(
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--no-package-lock',
      '--legacy-peer-deps',
      '--prefer-offline',
      tarball,
      `typescript@${CONSUMER_TYPESCRIPT}`,
    ],
    app,
  );
  const typescript = JSON.parse(
    readFileSync(join(app, 'node_modules', 'typescript', 'package.json'), 'utf8'),
  ).version;
  if (typescript !== CONSUMER_TYPESCRIPT)
    fail(`npm installed typescript ${typescript}, not ${CONSUMER_TYPESCRIPT}`);
  // Every peer, optional ones too: each subpath's declarations import its own.
  for (const name of [...Object.keys(pkg.peerDependencies ?? {}), '@types/node']) {
    const target = join(repo, 'node_modules', name);
    if (!existsSync(join(target, 'package.json')))
      fail(`${name} is not installed in this repo's node_modules: run \`npm ci\``);
    const link = join(app, 'node_modules', name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(target, link, 'junction');
  }
  writeFileSync(join(app, 'main.ts'), CONSUMER_SOURCE);
  writeFileSync(join(app, 'main.mts'), CONSUMER_SOURCE);
  const project = (kind, resolution) => {
    const file = `tsconfig.${kind}.${resolution}.json`;
    const module = { node10: 'commonjs', nodenext: 'nodenext', bundler: 'esnext' }[resolution];
    const options = { ...CONSUMER_COMPILER_OPTIONS, module, moduleResolution: resolution };
    writeFileSync(
      join(app, file),
      `${JSON.stringify({ compilerOptions: options, files: [kind === 'esm' ? 'main.mts' : 'main.ts'] }, null, 2)}\n`,
    );
    return file;
  };
  const installed = join(app, 'node_modules', pkg.name);
  const declarations = listFiles(join(installed, 'dist'))
    .filter((file) => /\.d\.[cm]?ts$/.test(file))
    .map((file) => relative(app, file).split(sep).join('/'));
  writeFileSync(
    join(app, 'tsconfig.declarations.json'),
    `${JSON.stringify({ compilerOptions: { ...CONSUMER_COMPILER_OPTIONS, module: 'nodenext', moduleResolution: 'nodenext' }, files: declarations }, null, 2)}\n`,
  );
  const ts5 = join(app, 'node_modules', 'typescript', 'lib', 'tsc.js');
  const ts7 = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  const ts7version = JSON.parse(
    readFileSync(join(repo, 'node_modules', 'typescript', 'package.json'), 'utf8'),
  ).version;
  const runs = [
    {
      what: `every published .d.ts compiles on its own with TypeScript ${ts7version}`,
      project: 'tsconfig.declarations.json',
      compiler: ts7,
    },
    ...[
      [ts5, typescript, 'cjs', 'node10'],
      [ts5, typescript, 'cjs', 'nodenext'],
      [ts7, ts7version, 'cjs', 'nodenext'],
      [ts5, typescript, 'esm', 'nodenext'],
      [ts7, ts7version, 'esm', 'nodenext'],
      [ts7, ts7version, 'esm', 'bundler'],
    ].map(([compiler, version, kind, resolution]) => ({
      what: `${kind === 'esm' ? 'an ESM' : 'a CommonJS'} consumer compiles with TypeScript ${version}, moduleResolution ${resolution}`,
      project: project(kind, resolution),
      compiler,
    })),
  ];
  // In parallel: each compiler checks every declaration of Nest and the peers (skipLibCheck off), which dominates the check's time.
  const begun = Date.now();
  const results = await Promise.all(
    runs.map(({ compiler, project: file }) => tsc(compiler, file, app)),
  );
  const failed = [];
  runs.forEach(({ what }, i) => {
    const { status, output } = results[i];
    if (status === 0) ok(what);
    else failed.push(`${what} (exit ${status}):\n${output || '(no output)'}`);
  });
  if (failed.length > 0) fail(`the types do not compile:\n${failed.join('\n')}`);
  note(`the TypeScript consumers took ${((Date.now() - begun) / 1000).toFixed(1)}s`);
}

// ---------------------------------------------------------------- main

const work = mkdtempSync(join(tmpdir(), 'nestjs-circuit-breaker-pack-'));
let exitCode = 0;
try {
  checkDistBuilt();
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
  checkMetadata(pkg);
  for (const [name, meta] of Object.entries(pkg.peerDependenciesMeta ?? {})) {
    if (meta?.optional && !optionalPeerOf(name)) OPTIONAL_PEERS.push(name);
  }
  const { tarball, files } = pack(work);
  checkShippedKinds(files);
  // reported now, failed at the end: the checks after it say more about a broken build
  const tracked = spawnSync('git', ['ls-files'], { cwd: repo, encoding: 'utf8' });
  const linkProblems = markdownLinkProblems({
    files,
    pkg,
    readText: (file) => readFileSync(join(repo, file), 'utf8'),
    tracked: tracked.status === 0 ? tracked.stdout.split('\n').filter(Boolean) : undefined,
  });
  if (linkProblems.length === 0) ok('every relative link of the shipped Markdown is shipped');
  else
    note(
      `${linkProblems.length} links of the shipped Markdown are dead from the tarball (failing at the end)`,
    );
  const app = join(work, 'app');
  const installed = install(tarball, app, pkg);
  checkExportTargets(installed, pkg);
  checkOperatorAssets(installed);
  // the static checks first: their messages say more than a failed import would
  checkTypes(installed);
  checkNoInternals(installed);
  checkImportGraph(installed, pkg);
  probe(app, 'probe.mjs', ESM_PROBE, 5);
  probe(app, 'probe.cjs', CJS_PROBE, 3);
  checkTypesVersions(pkg);
  await checkTypeScriptConsumers(tarball, work, pkg);
  if (linkProblems.length > 0) {
    fail(
      `links of the shipped Markdown that do not work from the installed package:\n  ${linkProblems.join('\n  ')}`,
    );
  }
  console.log(`pack-check passed in ${((Date.now() - started) / 1000).toFixed(1)}s`);
} catch (error) {
  exitCode = 1;
  console.error(
    `FAIL pack-check: ${error instanceof CheckError ? error.message : (error?.stack ?? error)}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = exitCode;
