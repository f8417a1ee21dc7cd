// Scenario 1: the closed path. Every call resolves; the cost is what a breaker
// adds to `await fn()` when nothing is wrong.

import { compileBatch, ratioRows, runInterleaved } from '../harness.mjs';
import { implementations, isClosed } from '../implementations.mjs';

export const CLOSED_PATH_IDS = [
  'raw',
  'minimal',
  'ours',
  'opossumNoTimeout',
  'opossumDefaults',
  'cockatielConsecutive',
  'cockatielCount',
];

export function closedPath(timing) {
  return resolvingCalls(
    CLOSED_PATH_IDS,
    { title: 'Closed path', description: 'await b.execute(() => Promise.resolve(1))' },
    timing,
  );
}

/** Every call of `ids` resolves, interleaved side by side: scenario 1, and 1b in its own process. */
export async function resolvingCalls(
  ids,
  { title, description },
  { batchSize, rounds, warmupRounds, seed },
) {
  const ok = () => Promise.resolve(1);
  const entries = ids.map((id) => {
    const impl = implementations[id];
    const target = impl.create(ok);
    return { id, label: impl.label, impl, target, ...compileBatch('value', impl.call, target, ok) };
  });
  const result = await runInterleaved(entries, { batchSize, rounds, warmupRounds, seed });
  const problems = entries
    .filter((e) => !isClosed(e.target))
    .map((e) => `${e.label} is not closed after the ${title.toLowerCase()} run`);
  for (const e of entries) e.impl.dispose?.(e.target);
  return {
    title,
    description,
    batchSize,
    rounds,
    rows: ratioRows(entries, result),
    problems,
  };
}
