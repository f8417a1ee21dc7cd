// Scenario 1b: the closed path with a deadline on every call, the default of
// ours and of opossum, against `minimal` (which has none).
//
// It runs in a child process of its own: in one process, calls that take the
// deadline path through `execute` reshape the optimized code of the plain path
// that scenario 1 measures (1.2x became 1.4x), and a real application takes one
// path or the other for nearly all its calls.

import { fileURLToPath } from 'node:url';
import { runInChild } from '../harness.mjs';
import { resolvingCalls } from './closed-path.mjs';

const SELF = fileURLToPath(import.meta.url);

export const DEADLINE_PATH_IDS = ['minimal', 'oursDefaults', 'opossumDefaults'];

function deadlinePath(timing) {
  return resolvingCalls(
    DEADLINE_PATH_IDS,
    {
      title: 'Closed path with a deadline',
      description:
        'await b.execute(() => Promise.resolve(1)) with a 10 s deadline per call (the defaults of ours and of opossum)',
    },
    timing,
  );
}

export async function deadlinePathIsolated(options) {
  return runInChild(SELF, options);
}

if (process.argv[1] === SELF) {
  const result = await deadlinePath(JSON.parse(process.argv[2]));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
