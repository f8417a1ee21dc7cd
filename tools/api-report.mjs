#!/usr/bin/env node
// The public API reports: one file per entry point of package.json "exports",
// `api/<entry>.api.md` (the root is `api/root.api.md`), made by API Extractor from
// the BUILT declarations (dist/, after `stripInternal`), so they show what a consumer
// compiles against: every exported name with its kind and signature, the members of
// classes and interfaces included. They are checked in: a change of the public
// surface shows in review, as Polly's PublicAPI.Shipped.txt does.
//
//   node tools/api-report.mjs            (npm run api:check) fails if a report differs
//                                        from the built declarations, printing the change
//   node tools/api-report.mjs --update   (npm run api:update) rewrites the reports
//   node tools/api-report.mjs --project DIR   the same for the package in DIR
//
// Neither builds: run `npm run build` first (`npm run api:update` does). API Extractor
// brings its own TypeScript (6.x, which still has the JavaScript compiler API that
// TypeScript 7 lacks); one compiler program serves every entry point. Offline, and
// deterministic: the same declarations give the same bytes.

import { Extractor, ExtractorConfig, CompilerState } from '@microsoft/api-extractor';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPORT_SUFFIX = '.api.md';

/** The entry points of package.json "exports" that declare types: `.` is `root`, `./core` is `core`. */
export function entryPoints(projectFolder) {
  const pkg = JSON.parse(readFileSync(join(projectFolder, 'package.json'), 'utf8'));
  return Object.entries(pkg.exports ?? {})
    .filter(([, target]) => typeof target === 'object' && target !== null && target.types)
    .map(([subpath, target]) => ({
      subpath,
      name: subpath === '.' ? 'root' : subpath.replace(/^\.\//, '').replaceAll('/', '-'),
      types: resolve(projectFolder, target.types),
    }));
}

function extractorConfig(projectFolder, entry, reportFolder, tempFolder) {
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder,
      mainEntryPointFilePath: entry.types,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2022', 'DOM'],
            types: [],
            strict: true,
            skipLibCheck: true,
          },
          files: [entry.types],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.name,
        reportFolder,
        reportTempFolder: tempFolder,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      messages: {
        compilerMessageReporting: { default: { logLevel: 'error' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          // No release tags here (`@publicApi`/`@internal` + stripInternal do that job).
          'ae-missing-release-tag': { logLevel: 'none' },
          'ae-internal-missing-underscore': { logLevel: 'none' },
          'ae-unresolved-link': { logLevel: 'none' },
          'ae-undocumented': { logLevel: 'none' },
          // A public declaration that names a type its entry point does not export:
          // written into the report (a reviewer sees it), not a failure.
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
        },
        // The doc comments use Nest's own tags (`@publicApi`); TSDoc syntax is not checked.
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    packageJsonFullPath: join(projectFolder, 'package.json'),
  });
}

/** The exported names of each entry point, from the compiler program API Extractor built. */
function countNames(compilerState, entries) {
  const program = compilerState.program;
  const checker = program.getTypeChecker();
  const counts = new Map();
  for (const entry of entries) {
    const file = program.getSourceFile(entry.types);
    const symbol = file && checker.getSymbolAtLocation(file);
    counts.set(entry.name, symbol ? checker.getExportsOfModule(symbol).length : 0);
  }
  return counts;
}

/**
 * Keeps what a reviewer needs: the entry point in the title, and no line that would
 * change without the surface changing. Every name here is public (the package uses no
 * release tags: `@internal` + stripInternal do that job), and whether a member has a
 * doc comment is not part of its signature, so `// @public` and `// (undocumented)`
 * go; the `ae-forgotten-export` warnings stay (a public declaration naming a type
 * that its entry point does not export).
 */
export function tidyReport(text, entry) {
  const pkg = text.match(/^## API Report File for "([^"]+)"/)?.[1];
  const title = pkg && entry.subpath !== '.' ? `${pkg}${entry.subpath.slice(1)}` : pkg;
  const lines = text
    .replace(/^## API Report File for "[^"]+"/, `## API Report File for "${title}"`)
    .split('\n')
    .filter(
      (line) =>
        !/^\s*\/\/ (@public( \(undocumented\))?|\(undocumented\))$/.test(line) &&
        line !== '// (No @packageDocumentation comment for this package)',
    );
  // An empty `//` separated a warning from the tag just removed.
  return lines
    .filter((line, index) => !(/^\s*\/\/$/.test(line) && !/^\s*\/\//.test(lines[index + 1] ?? '')))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n');
}

/**
 * The changed lines between two texts, as hunks with a line of context each side
 * (`@@ line N @@`, then `  ` kept, `- ` removed, `+ ` added), at most `maxLines` lines.
 * The common head and tail are trimmed first; the middle is compared line by line
 * (longest common subsequence) while it is small, else shown as one block.
 */
export function briefDiff(before, after, maxLines = 80) {
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const ops = lineOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  const lines = [];
  let line = head; // index in `a` of the next kept or removed line
  let open = false;
  for (let index = 0; index < ops.length; index++) {
    const [op, text] = ops[index];
    if (op === ' ') {
      const next = ops[index + 1];
      if (open && (next === undefined || next[0] === ' ')) {
        lines.push(`  ${text}`);
        open = false;
      } else if (!open && next !== undefined && next[0] !== ' ') {
        lines.push(`@@ line ${line + 1} @@`, `  ${text}`);
        open = true;
      } else if (open) {
        lines.push(`  ${text}`);
      }
      line++;
      continue;
    }
    if (!open) {
      lines.push(`@@ line ${line + 1} @@`);
      if (line > 0) lines.push(`  ${a[line - 1]}`);
      open = true;
    }
    lines.push(`${op} ${text}`);
    if (op === '-') line++;
  }
  if (open && tail > 0) lines.push(`  ${a[a.length - tail]}`);
  if (lines.length > maxLines) {
    return [...lines.slice(0, maxLines), `  ... ${lines.length - maxLines} more lines`].join('\n');
  }
  return lines.join('\n');
}

/** `[op, line]` pairs turning `a` into `b` (op: ' ' kept, '-' removed, '+' added). */
function lineOps(a, b) {
  if (a.length * b.length > 4_000_000) {
    return [...a.map((text) => ['-', text]), ...b.map((text) => ['+', text])];
  }
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i][j] =
        a[i] === b[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    }
  }
  const ops = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push([' ', a[i++]]);
      j++;
    } else if (j < b.length && (i === a.length || lengths[i][j + 1] >= lengths[i + 1][j])) {
      ops.push(['+', b[j++]]);
    } else {
      ops.push(['-', a[i++]]);
    }
  }
  // Within a run of changes, removals before additions, as diff prints them.
  for (let start = 0; start < ops.length; start++) {
    if (ops[start][0] === ' ') continue;
    let stop = start;
    while (stop < ops.length && ops[stop][0] !== ' ') stop++;
    const run = ops.slice(start, stop);
    ops.splice(
      start,
      run.length,
      ...run.filter(([op]) => op === '-'),
      ...run.filter(([op]) => op === '+'),
    );
    start = stop;
  }
  return ops;
}

/**
 * Makes the report of every entry point and compares it with the checked-in one
 * (`update: false`) or rewrites it (`update: true`). Returns what differs; never exits.
 */
export function runApiReports({
  projectFolder,
  reportFolder = join(projectFolder, 'api'),
  update = false,
}) {
  const entries = entryPoints(projectFolder);
  const missingBuild = entries.filter((entry) => !existsSync(entry.types));
  if (missingBuild.length > 0) {
    return {
      ok: false,
      problems: missingBuild.map(
        (entry) =>
          `${relative(projectFolder, entry.types)} (entry point ${entry.subpath}) is missing: run npm run build first`,
      ),
      entries: [],
    };
  }
  if (update) mkdirSync(reportFolder, { recursive: true });
  const tempFolder = mkdtempSync(join(tmpdir(), 'api-report-'));
  try {
    const configs = entries.map((entry) =>
      extractorConfig(projectFolder, entry, reportFolder, tempFolder),
    );
    const compilerState = CompilerState.create(configs[0], {
      additionalEntryPoints: entries.map((entry) => entry.types),
    });
    const counts = countNames(compilerState, entries);
    const problems = [];
    const results = entries.map((entry, index) => {
      const messages = [];
      const report = join(reportFolder, `${entry.name}${REPORT_SUFFIX}`);
      const before = existsSync(report) ? readFileSync(report, 'utf8') : undefined;
      const result = Extractor.invoke(configs[index], {
        // API Extractor only writes its report to the temporary folder; this script
        // compares it, and writes the checked-in file itself (after tidying it).
        localBuild: false,
        compilerState,
        messageCallback: (message) => {
          // API Extractor's own console lines are replaced by the summary below.
          message.handled = true;
          // Whether a report changed is told below, with the change itself.
          if (String(message.messageId).startsWith('console-api-report-')) return;
          if (message.logLevel === 'error' || message.logLevel === 'warning') {
            messages.push(message.formatMessageWithLocation(projectFolder));
          }
        },
      });
      const made = join(tempFolder, `${entry.name}${REPORT_SUFFIX}`);
      if (!existsSync(made)) {
        problems.push(
          `${entry.subpath}: API Extractor wrote no report (${result.errorCount} errors)`,
        );
      }
      const after = existsSync(made) ? tidyReport(readFileSync(made, 'utf8'), entry) : '';
      const changed = before !== after;
      for (const text of messages) problems.push(`${entry.subpath}: ${text}`);
      if (changed && update && after) writeFileSync(report, after);
      if (changed && !update) {
        problems.push(
          before === undefined
            ? `${entry.subpath}: no report ${relative(projectFolder, report)}: run npm run api:update and commit it`
            : `${entry.subpath}: the public API differs from ${relative(projectFolder, report)}:\n${briefDiff(before, after)}`,
        );
      }
      return { entry, report, changed, names: counts.get(entry.name) };
    });
    const expected = new Set(entries.map((entry) => `${entry.name}${REPORT_SUFFIX}`));
    const stale = existsSync(reportFolder)
      ? readdirSync(reportFolder).filter(
          (file) => file.endsWith(REPORT_SUFFIX) && !expected.has(file),
        )
      : [];
    for (const file of stale) {
      if (update) rmSync(join(reportFolder, file));
      else
        problems.push(
          `${relative(projectFolder, join(reportFolder, file))}: no such entry point in package.json "exports"; npm run api:update removes it`,
        );
    }
    return { ok: problems.length === 0, problems, entries: results };
  } finally {
    rmSync(tempFolder, { recursive: true, force: true });
  }
}

/** Fails when a declaration file of dist/ is older than a source of lib/: the reports would describe an old build. */
function staleBuild(projectFolder) {
  const newest = (folder, suffix) => {
    let latest = 0;
    for (const item of readdirSync(folder, { recursive: true })) {
      if (String(item).endsWith(suffix))
        latest = Math.max(latest, statSync(join(folder, item)).mtimeMs);
    }
    return latest;
  };
  const lib = join(projectFolder, 'lib');
  const dist = join(projectFolder, 'dist', 'index.d.ts');
  if (!existsSync(lib) || !existsSync(dist)) return false;
  return newest(lib, '.ts') > statSync(dist).mtimeMs;
}

function main() {
  const args = process.argv.slice(2);
  const update = args.includes('--update');
  // --project DIR: another package's folder (the tool's own test runs it on a fixture).
  const at = args.indexOf('--project');
  const projectFolder = resolve(
    at >= 0 ? args[at + 1] : join(dirname(fileURLToPath(import.meta.url)), '..'),
  );
  const started = Date.now();
  if (!existsSync(join(projectFolder, 'package.json'))) {
    console.error(`api-report: no package.json in ${projectFolder}`);
    process.exit(1);
  }
  if (staleBuild(projectFolder)) {
    console.error(
      'api-report: lib/ is newer than dist/: run npm run build first (npm run api:update does)',
    );
    process.exit(1);
  }
  const { ok, problems, entries } = runApiReports({ projectFolder, update });
  for (const { entry, changed, names } of entries) {
    const state = changed ? (update ? 'updated' : 'DIFFERS') : 'same';
    const report = `api/${entry.name}${REPORT_SUFFIX}`;
    console.log(
      `${state.padEnd(8)}${entry.subpath.padEnd(18)}${String(names).padStart(4)} names  ${report}`,
    );
  }
  const total = entries.reduce((sum, { names }) => sum + names, 0);
  console.log(
    `${total} exported names over ${entries.length} entry points, ${Date.now() - started} ms`,
  );
  if (!ok) {
    for (const problem of problems) console.error(`\n${problem}`);
    console.error(
      '\nThe public API changed without its report: if the change is meant, run `npm run api:update`' +
        ' and commit the api/ files with it (CONTRIBUTING.md, "The public API reports").',
    );
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
