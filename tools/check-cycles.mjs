#!/usr/bin/env node
// Fails when the modules of lib/ import each other in a cycle. A cycle makes the
// load order decide which module sees the other half-initialised, and makes a
// file impossible to read (or move) on its own.
//
// Every relative specifier counts, type-only ones too (`import type`, `export
// type ... from`, `import('./x.js').T`): a type cycle is still two files that
// cannot be understood apart. `./x.js` maps to `./x.ts` (or `./x/index.ts`).
// Cycles are found with Tarjan's strongly connected components; each component
// of more than one file (or a file importing itself) is printed with one cycle
// through it, and the exit code is 1.
//
// Usage: node tools/check-cycles.mjs [dir]   (or `npm run lint:cycles`; dir defaults to lib)

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(repo, process.argv[2] ?? 'lib');

/** Every .ts file under `dir` (declaration files excluded). */
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'),
    )
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    .toSorted();
}

/** The code without comments, so that an import written in a comment does not count. Strings are kept. */
function withoutComments(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
      out += ' ';
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const SPECIFIER_PATTERNS = [
  /\b(?:import|export)\s+(?:type\s+)?[^'"`;]*?\bfrom\s*(['"])(\.{1,2}\/[^'"]+)\1/g, // import x from './y.js', export * from, import type, export type
  /\bimport\s*(['"])(\.{1,2}\/[^'"]+)\1/g, // import './y.js'
  /\bimport\s*\(\s*(['"])(\.{1,2}\/[^'"]+)\1\s*\)/g, // import('./y.js'), in code or in a type
];

/** The files of lib/ that `file` imports, resolved. */
function importsOf(file) {
  const code = withoutComments(readFileSync(file, 'utf8'));
  const targets = new Set();
  for (const pattern of SPECIFIER_PATTERNS) {
    for (const match of code.matchAll(pattern)) {
      const target = resolveSpecifier(file, match[2]);
      if (target !== undefined) targets.add(target);
    }
  }
  return [...targets].toSorted();
}

function resolveSpecifier(from, spec) {
  const base = resolve(dirname(from), spec);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    join(base, 'index.ts'),
    base,
  ];
  return candidates.find(
    (candidate) =>
      candidate.endsWith('.ts') && existsSync(candidate) && statSync(candidate).isFile(),
  );
}

/** Tarjan's strongly connected components, iteratively (no recursion limit on deep graphs). */
function stronglyConnected(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work.at(-1);
      const [node, next] = frame;
      const edges = graph.get(node) ?? [];
      if (next < edges.length) {
        frame[1]++;
        const to = edges[next];
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push([to, 0]);
        } else if (onStack.has(to)) {
          low.set(node, Math.min(low.get(node), index.get(to)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work.at(-1)[0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        components.push(component);
      }
    }
  }
  return components;
}

/** One shortest cycle through `start` inside `members` (breadth-first back to `start`). */
function cycleThrough(graph, start, members) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

if (!existsSync(root)) {
  console.error(`check-cycles: ${root} does not exist`);
  process.exit(1);
}
const files = sources(root);
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const name = (file) => relative(repo, file);
const cyclic = stronglyConnected(graph)
  .filter(
    (component) => component.length > 1 || (graph.get(component[0]) ?? []).includes(component[0]),
  )
  .map((component) => component.toSorted())
  .toSorted((a, b) => b.length - a.length || a[0].localeCompare(b[0]));

if (cyclic.length === 0) {
  console.log(`check-cycles: no import cycle among ${files.length} files of ${name(root)}`);
} else {
  console.error(
    `check-cycles: ${cyclic.length} import cycle${cyclic.length === 1 ? '' : 's'} in ${name(root)} (type-only imports count too):`,
  );
  cyclic.forEach((component, i) => {
    const members = new Set(component);
    console.error(
      `\n${i + 1}. ${component.length} files import each other: ${component.map(name).join(', ')}`,
    );
    console.error(
      `   e.g. ${cycleThrough(graph, component[0], members).map(name).join('\n     -> ')}`,
    );
    // Every edge inside the component: each is a candidate to cut.
    for (const file of component) {
      const inside = graph.get(file).filter((to) => members.has(to));
      if (inside.length > 0)
        console.error(`   ${name(file)} imports ${inside.map(name).join(', ')}`);
    }
  });
  console.error(
    '\nBreak each cycle: move what both sides need into a file of its own that imports neither, or invert the dependency (pass it in).',
  );
  process.exitCode = 1;
}
