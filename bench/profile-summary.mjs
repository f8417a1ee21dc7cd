// Summarizes a .cpuprofile: self time per function, and per source line of the
// package (mapped back to lib/*.ts through dist's source maps).
//
//   node bench/profile-summary.mjs bench/<file>.cpuprofile [top] [calls]
//
// With `calls` (the driver prints it), each line also shows ns per call.

import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

const [file, topArg = '25', callsArg] = process.argv.slice(2);
const top = Number(topArg);
const calls = callsArg === undefined ? undefined : Number(callsArg);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const dt = (profile.endTime - profile.startTime) / profile.samples.length / 1000; // ms per sample
const total = profile.samples.length;

const maps = new Map();
function sourceMapOf(url) {
  if (!url.includes('/dist/')) return undefined;
  if (!maps.has(url)) {
    try {
      maps.set(url, new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8'))));
    } catch {
      maps.set(url, undefined);
    }
  }
  return maps.get(url);
}
const short = (url) =>
  url === ''
    ? '(native)'
    : url.replace(/^file:\/\/.*?\/(dist|bench|node_modules)\//, '$1/').replace(/^node:/, 'node:');

function original(url, line) {
  const map = sourceMapOf(url);
  if (map === undefined) return `${short(url)}:${line}`;
  const entry = map.findEntry(line - 1, 0);
  if (entry?.originalSource === undefined) return `${short(url)}:${line}`;
  return `${entry.originalSource.replace(/^.*\/lib\//, 'lib/')}:${entry.originalLine + 1}`;
}

const byFunction = new Map();
const byLine = new Map();
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  const self = node.hitCount ?? 0;
  if (self === 0) continue;
  const name = `${functionName || '(anonymous)'}  ${url ? original(url, lineNumber + 1) : short(url)}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + self);
  for (const { line, ticks } of node.positionTicks ?? []) {
    if (!url.includes('/dist/')) continue;
    const key = `${original(url, line)}  (${functionName || '(anonymous)'})`;
    byLine.set(key, (byLine.get(key) ?? 0) + ticks);
  }
}

const pct = (n) => `${((100 * n) / total).toFixed(1).padStart(5)} %`;
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [name, n] of [...map].toSorted((a, b) => b[1] - a[1]).slice(0, top)) {
    const perCall =
      calls === undefined ? '' : `  ${((n * dt * 1e6) / calls).toFixed(1).padStart(6)} ns/call`;
    console.log(`${pct(n)}  ${(n * dt).toFixed(0).padStart(6)} ms${perCall}  ${name}`);
  }
};
console.log(`${file}: ${total} samples, ${(total * dt).toFixed(0)} ms`);
print('Self time by function', byFunction);
print('Self time by line of the package (lib/*.ts)', byLine);
