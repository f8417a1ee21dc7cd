#!/usr/bin/env node
// Fails when the engine's shape drifts back to a stack. Two rules of CONTRIBUTING.md
// ("Structure") that no linter here states:
// - no class in lib/core extends another, except errors (a class whose name ends in
//   `Error`): capabilities are collaborators a breaker holds, not layers it inherits;
// - lib/core keeps its files in concept folders: at most MAX_FLAT files sit at its top
//   (the entry point, the one `Breaker` class and the few that every folder shares).
// Function length is oxlint's `max-lines-per-function` (.oxlintrc.json).
//
// Usage: node tools/check-structure.mjs   (or `npm run lint:structure`)

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const core = join(repo, 'lib', 'core');
const MAX_FLAT = 6;

const files = readdirSync(core, { withFileTypes: true, recursive: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
  .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
  .toSorted();

const problems = [];
const EXTENDS =
  /^\s*(?:export\s+)?(?:abstract\s+)?class\s+(\w+)(?:<[^{]*?>)?\s+extends\s+([\w.]+)/gm;
for (const file of files) {
  for (const [, name, base] of readFileSync(file, 'utf8').matchAll(EXTENDS)) {
    if (!name.endsWith('Error')) {
      problems.push(`${relative(repo, file)}: class ${name} extends ${base} (compose it instead)`);
    }
  }
}
const flat = files.filter((file) => dirname(file) === core);
if (flat.length > MAX_FLAT) {
  problems.push(
    `lib/core has ${flat.length} files at its top (at most ${MAX_FLAT}): move each into its concept folder\n  ` +
      flat.map((file) => relative(core, file)).join('\n  '),
  );
}

if (problems.length > 0) {
  console.error(`check-structure: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(
  `check-structure: no class extends another in lib/core, ${flat.length} files at its top`,
);
