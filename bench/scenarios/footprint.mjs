// Scenario 4: footprint. Bytes per breaker over many breakers, and the timers
// each one creates, measured in a fresh child process per kind.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CHILD = fileURLToPath(new URL('./footprint-child.mjs', import.meta.url));

export const FOOTPRINT_KINDS = [
  { kind: 'ours-count-100', label: 'ours, count window of 100 (default)', target: true },
  { kind: 'ours-time-10', label: 'ours, time window of 10 buckets', target: true },
  {
    kind: 'per-key-child',
    label: 'ours, idle per-key child (with its key and Map entry)',
    target: true,
  },
  { kind: 'minimal', label: 'minimal' },
  { kind: 'opossum-defaults', label: 'opossum (defaults)' },
  { kind: 'cockatiel-consecutive', label: 'cockatiel Consecutive(5)' },
  { kind: 'cockatiel-count-100', label: 'cockatiel Count(100)' },
];

export async function footprint({ count }) {
  const rows = [];
  for (const spec of FOOTPRINT_KINDS) {
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', CHILD, spec.kind, String(count)],
      { maxBuffer: 1 << 20 },
    );
    rows.push({ ...spec, ...JSON.parse(stdout.trim().split('\n').pop()) });
  }
  return { title: 'Footprint', count, rows };
}
