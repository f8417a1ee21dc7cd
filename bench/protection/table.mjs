// The table of bench/PROTECTION-RESULTS.md: its header and one row per
// implementation (the mean over a scenario's runs), shared by run.mjs and
// current-peers.mjs.

import { fixed, mean } from './summary.mjs';

export const HEADER =
  '| implementation | wasted | peak in-flight | waiting (s) | detect (s) | recover (s) | goodput/s (before) | p50 / p99 ms | amplification |\n| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |';

/** One row: `label`, then the figures of `results` (one per run of the scenario). */
export function row(label, results) {
  const detects = results.map((r) => r.detectMs).filter((v) => v !== undefined);
  const recovers = results.map((r) => r.recoverMs);
  const reached = recovers.filter((v) => v !== undefined);
  const never = recovers.length - reached.length;
  const recoverText =
    reached.length === 0
      ? 'not within the run'
      : results.length === 1
        ? fixed(reached[0] / 1000, 1)
        : `${fixed(mean(reached) / 1000, 1)} (worst ${never > 0 ? `not within the run in ${never} of ${results.length}` : fixed(Math.max(...reached) / 1000, 1)})`;
  return `| ${label} | ${fixed(mean(results.map((r) => r.wasted)))} | ${fixed(Math.max(...results.map((r) => r.peakInFlight)))} | ${fixed(mean(results.map((r) => r.waitingS)))} | ${detects.length === 0 ? '–' : fixed(mean(detects) / 1000, 2)} | ${recoverText} | ${fixed(mean(results.map((r) => r.goodput)), 1)} (${fixed(mean(results.map((r) => r.baselineGoodput)), 1)}) | ${fixed(mean(results.map((r) => r.p50Ms)))} / ${fixed(mean(results.map((r) => r.p99Ms)))} | ${fixed(mean(results.map((r) => r.amplification)), 2)} |`;
}
