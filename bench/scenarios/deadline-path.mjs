// Scenario 1b: the closed path with a deadline on every call, the default of
// ours and of opossum, against `minimal` (which has none).
//
// It runs in a child process of its own: in one process, calls that take the
// deadline path through `execute` reshape the optimized code of the plain path
// that scenario 1 measures (1.2x became 1.4x), and a real application takes one
// path or the other for nearly all its calls.
//
// The rows are timed twice: with a forced full GC before each round, like the
// other scenarios, and in the steady state without (issue 26). The forced GC
// finds no deadline call alive between two rounds, so it collects the hidden
// classes of the call objects (V8 holds map transitions weakly) and deoptimizes
// every function compiled against them ("weak objects" in --trace-deopt): each
// round starts the deadline path over, unoptimized, and re-optimizes it, which
// on a loaded machine takes much of a batch. `minimal` and the plain path use
// only the engine's own promise and async-function maps, which never die. A
// service under traffic has calls in flight at every GC, and full GCs are rare:
// the steady-state figure is the per-call cost; the other shows that effect.

import { fileURLToPath } from 'node:url';
import { runInChild } from '../harness.mjs';
import { DEFAULT_DEADLINE } from '../implementations.mjs';
import { resolvingCalls } from './closed-path.mjs';

const SELF = fileURLToPath(import.meta.url);

export const DEADLINE_PATH_IDS = ['minimal', 'oursDefaults', 'opossumDefaults'];

function deadlinePath(timing) {
  return resolvingCalls(
    DEADLINE_PATH_IDS,
    {
      title: 'Closed path with a deadline',
      description: `await b.execute(() => Promise.resolve(1)) with the default deadline per call (ours ${DEFAULT_DEADLINE}, opossum 10 s)`,
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
