// Scenario 1c: what each recovery option of issue 16 costs a call of the
// closed path, configured but unused (no contention, no ramp under way) and in
// use (a ramp admitting every call, a retry policy whose calls succeed).
//
// In a child process of its own, as 1b: a breaker with a guard takes another
// way through `execute`, which would reshape the optimized code of the plain
// path that scenario 1 measures.

import { fileURLToPath } from 'node:url';
import { runInChild } from '../harness.mjs';
import { resolvingCalls } from './closed-path.mjs';

const SELF = fileURLToPath(import.meta.url);

export const RECOVERY_PATH_IDS = [
  'minimal',
  'ours',
  'oursBulkhead',
  'oursBulkheadAdaptive',
  'oursRampUp',
  'oursRamping',
  'oursHealthCheck',
  'oursRetry',
];

function recoveryPath(timing) {
  return resolvingCalls(
    RECOVERY_PATH_IDS,
    {
      title: 'Closed path with the recovery options',
      description:
        'await b.execute(() => Promise.resolve(1)) with a bulkhead (fixed or adaptive), a slow start, a health check or a retry policy',
    },
    timing,
  );
}

export async function recoveryPathIsolated(options) {
  return runInChild(SELF, options);
}

if (process.argv[1] === SELF) {
  const result = await recoveryPath(JSON.parse(process.argv[2]));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
