// The protection benchmark's results history: one JSON line per run and seed
// (commit, seed, and per scenario and implementation the outcome figures,
// without the series). Full runs go to bench/results/protection-history.jsonl,
// committed with the tables they wrote, beside the engine benchmark's
// runs.jsonl; quick runs to protection-local-runs.jsonl (not committed).

import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { environment } from '../results/history.mjs';

const here = (name) => fileURLToPath(new URL(`../results/${name}`, import.meta.url));
export const PROTECTION_LOG = here('protection-history.jsonl');
export const PROTECTION_LOCAL_LOG = here('protection-local-runs.jsonl');

const round = (value, digits) => (value === undefined ? null : Number(value.toFixed(digits)));

/** The figures of one simulation, rounded, without its series. */
export function outcome(figures) {
  return {
    wasted: figures.wasted,
    peakInFlight: figures.peakInFlight,
    waitingS: round(figures.waitingS, 1),
    detectMs: round(figures.detectMs, 0),
    recoverMs: round(figures.recoverMs, 0),
    goodput: round(figures.goodput, 2),
    p50Ms: round(figures.p50Ms, 0),
    p99Ms: round(figures.p99Ms, 0),
    amplification: round(figures.amplification, 3),
  };
}

/**
 * Appends one line: `kind` (`protection`, `protection-candidates`, `protection-current-peers`), the seed,
 * and `results`: `[{ scenario, run, implementation, figures }]`; `peers` (`{ opossum,
 * cockatiel }`) when the peers' rows ran other versions than the ones installed here.
 */
export function appendProtectionRun(kind, { seed, quick, results, peers }) {
  const env = environment();
  const line = {
    kind,
    mode: quick ? 'quick' : 'full',
    date: env.date,
    commit: env.commit,
    dirty: env.dirty,
    version: env.version,
    node: env.node,
    peers: peers ?? { opossum: env.peers.opossum, cockatiel: env.peers.cockatiel },
    seed,
    results: results.map((r) => ({
      scenario: r.scenario,
      run: r.run,
      implementation: r.implementation,
      ...outcome(r.figures),
    })),
  };
  appendFileSync(quick ? PROTECTION_LOCAL_LOG : PROTECTION_LOG, `${JSON.stringify(line)}\n`);
}
