// Scenario 1b: the closed path with a deadline on every call, the default of
// ours and of opossum, against `minimal` (which has none).
//
// It runs in a child process of its own: in one process, calls that take the
// deadline path through `execute` reshape the optimized code of the plain path
// that scenario 1 measures (1.2x became 1.4x), and a real application takes one
// path or the other for nearly all its calls.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { compileBatch, ratioRows, runInterleaved } from '../harness.mjs';
import { implementations, isClosed } from '../implementations.mjs';

const SELF = fileURLToPath(import.meta.url);

export const DEADLINE_PATH_IDS = ['minimal', 'oursDefaults', 'opossumDefaults'];

async function deadlinePath({ batchSize, rounds, warmupRounds, seed }) {
  const ok = () => Promise.resolve(1);
  const entries = DEADLINE_PATH_IDS.map((id) => {
    const impl = implementations[id];
    const target = impl.create(ok);
    return { id, label: impl.label, impl, target, ...compileBatch('value', impl.call, target, ok) };
  });
  const result = await runInterleaved(entries, { batchSize, rounds, warmupRounds, seed });
  const problems = entries.filter((e) => !isClosed(e.target)).map((e) => `${e.label} is not closed after the deadline-path run`);
  for (const e of entries) e.impl.dispose?.(e.target);
  return {
    title: 'Closed path with a deadline',
    description: 'await b.execute(() => Promise.resolve(1)) with a 10 s deadline per call (the defaults of ours and of opossum)',
    batchSize,
    rounds,
    rows: ratioRows(entries, result),
    problems,
  };
}

export async function deadlinePathIsolated(options) {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', SELF, JSON.stringify(options)], { maxBuffer: 1 << 22 });
  return JSON.parse(stdout.trim().split('\n').pop());
}

if (process.argv[1] === SELF) {
  const result = await deadlinePath(JSON.parse(process.argv[2]));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
