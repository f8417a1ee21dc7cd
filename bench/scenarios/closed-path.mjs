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

/**
 * Every call of `ids` resolves, interleaved side by side: scenario 1, and 1b in
 * its own process. With `steadyRounds`, the same rows are timed again without
 * the forced GC before each round, and each row gets a `steady` figure.
 */
export async function resolvingCalls(
  ids,
  { title, description },
  { batchSize, rounds, warmupRounds, seed, steadyRounds },
) {
  const ok = () => Promise.resolve(1);
  const entries = ids.map((id) => {
    const impl = implementations[id];
    const target = impl.create(ok);
    return { id, label: impl.label, impl, target, ...compileBatch('value', impl.call, target, ok) };
  });
  const result = await runInterleaved(entries, { batchSize, rounds, warmupRounds, seed });
  const steady =
    steadyRounds === undefined
      ? undefined
      : await runInterleaved(entries, {
          batchSize,
          rounds: steadyRounds,
          warmupRounds,
          seed: seed + 1,
          gcBetweenRounds: false,
        });
  const problems = entries
    .filter((e) => !isClosed(e.target))
    .map((e) => `${e.label} is not closed after the ${title.toLowerCase()} run`);
  for (const e of entries) e.impl.dispose?.(e.target);
  return {
    title,
    description,
    batchSize,
    rounds,
    ...(steady === undefined ? {} : { steadyRounds }),
    rows: ratioRows(entries, result).map((row) =>
      steady === undefined
        ? row
        : {
            ...row,
            steady: {
              nsPerCall: steady.nsPerCall[row.id],
              ratioToMinimal: steady.ratio(row.id, 'minimal'),
            },
          },
    ),
    problems,
  };
}
