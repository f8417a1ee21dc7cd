#!/usr/bin/env node
// Bundles tsc's output (dist/**/*.js) into one module per entry point of package.json
// "exports", plus the chunks they share, in dist/bundle/: what the package ships and
// what `import 'nestjs-circuit-breaker'` loads. tsc has already compiled the
// decorators and their metadata (`emitDecoratorMetadata`), so the bundler only joins
// plain ES modules: it transforms nothing. Every bare import (Nest, RxJS, the peers,
// node:*) stays an import. A class defined once stays defined once: code used by two
// entry points goes to a shared chunk, so `instanceof` holds across entry points.
//
// dist/**/*.js and dist/**/*.d.ts stay where tsc wrote them: the types point there,
// and the benchmarks import internal modules of the engine from there.
//
// Usage: node tools/bundle.mjs   (run by `npm run build`, after tsc)

import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'rolldown';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const out = join(repo, 'dist', 'bundle');

/** entry name (its path under dist/bundle/, without .js) -> tsc's module for it */
const input = {};
for (const target of Object.values(pkg.exports)) {
  if (typeof target !== 'object') continue;
  const bundled = target.default.replace(/^\.\//, '');
  if (!bundled.startsWith('dist/bundle/'))
    throw new Error(`exports target ${target.default} is not under dist/bundle/`);
  const name = bundled.slice('dist/bundle/'.length).replace(/\.js$/, '');
  input[name] = join(repo, 'dist', `${name}.js`);
}

/**
 * tsc's modules read package.json relative to their own place in dist/
 * (`createRequire(import.meta.url)('../../package.json')`, for the version of the
 * OpenTelemetry scope); in a chunk that path would point elsewhere. The bundle is
 * built from the package.json it ships with, so its name and version go in as a
 * value. Any other use of `import.meta.url` fails the build: it would depend on
 * where the bundler put the code.
 */
const packageJsonOfDist = {
  name: 'package-json-of-dist',
  transform(code, id) {
    if (!id.startsWith(join(repo, 'dist') + sep)) return null; // the bundler's own runtime
    const rewritten = code.replace(
      /createRequire\(import\.meta\.url\)\((['"])((?:\.\.\/)+package\.json)\1\)/g,
      (whole, _quote, path) => {
        if (resolve(dirname(id), path) !== join(repo, 'package.json'))
          throw new Error(`${relative(repo, id)} requires ${path}, which is not this package.json`);
        return `(${JSON.stringify({ name: pkg.name, version: pkg.version })})`;
      },
    );
    if (rewritten.includes('import.meta.url'))
      throw new Error(
        `${relative(repo, id)} uses import.meta.url: in a bundle it is the chunk's URL, not the module's`,
      );
    return rewritten === code ? null : { code: rewritten };
  },
};

rmSync(out, { recursive: true, force: true });
await build({
  input,
  cwd: repo,
  platform: 'node',
  // every bare specifier is someone else's package: import it, never inline it
  external: (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0'),
  treeshake: { moduleSideEffects: false },
  transform: { target: 'es2022' },
  plugins: [packageJsonOfDist],
  output: {
    dir: out,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    minify: false,
    comments: { legal: true, annotation: true, jsdoc: false },
    sourcemap: false,
  },
});
// The bundle must export exactly what tsc's entry module exports, by name, and keep
// one copy of each value: a name that two entry points export as the same object in
// tsc's output (Breaker, the error classes: `instanceof` across entry points) is the
// same object in the bundle too.
const loaded = [];
for (const [name, file] of Object.entries(input)) {
  const [unbundled, bundled] = await Promise.all([
    import(pathToFileURL(file).href),
    import(pathToFileURL(join(out, `${name}.js`)).href),
  ]);
  const a = Object.keys(unbundled).toSorted().join(', ');
  const b = Object.keys(bundled).toSorted().join(', ');
  if (a !== b)
    throw new Error(`dist/bundle/${name}.js exports\n  ${b}\nnot, as dist/${name}.js,\n  ${a}`);
  loaded.push({ name, unbundled, bundled });
}
for (const [i, x] of loaded.entries()) {
  for (const y of loaded.slice(i + 1)) {
    for (const key of Object.keys(x.bundled).filter((k) => k in y.bundled)) {
      const shared = x.unbundled[key] === y.unbundled[key];
      if (shared !== (x.bundled[key] === y.bundled[key]))
        throw new Error(
          `${key} of ${x.name} and of ${y.name} are ${shared ? 'one value in dist/ but two copies in the bundle' : 'two values in dist/ but one in the bundle'}`,
        );
    }
  }
}
console.log(
  `bundled ${Object.keys(input).length} entry points into ${relative(repo, out)}/ (${Object.keys(input).join(', ')})`,
);
