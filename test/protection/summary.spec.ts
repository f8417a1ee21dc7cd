import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  SUMMARY_END,
  SUMMARY_PAGES,
  SUMMARY_START,
  latestRun,
  renderSummary,
  withSummary,
  type ProtectionOutcome,
  type ProtectionRun,
} from '../../bench/protection/summary.mjs';

// The protection table of README.md and docs/benchmarks.md is rendered from the
// results history (bench/protection/summary.mjs), never copied by hand: both
// pages must hold what the latest full run renders.

const outcome = (
  scenario: string,
  implementation: string,
  figures: Partial<ProtectionOutcome> = {},
): ProtectionOutcome => ({
  scenario,
  run: `run ${scenario}`,
  implementation,
  wasted: 0,
  peakInFlight: 0,
  waitingS: 0,
  detectMs: null,
  recoverMs: 0,
  goodput: 0,
  p50Ms: 0,
  p99Ms: 0,
  amplification: 1,
  ...figures,
});

/** A run with every cell the table reads, each figure given by `figures(scenario, implementation)`. */
function syntheticRun(
  figures: (scenario: string, implementation: string) => Partial<ProtectionOutcome>[],
): ProtectionRun {
  const cells: [string, string][] = [];
  for (const scenario of ['1', '2b', '3', '6', '9'])
    for (const implementation of [
      'none',
      'opossum',
      'cockatielConsecutive',
      'cockatielSampling',
      'ours',
    ])
      cells.push([scenario, implementation]);
  cells.push(['1', 'oursHealthCheck'], ['9', 'oursShared']);
  return {
    kind: 'protection',
    mode: 'full',
    date: '2026-12-01T00:00:00.000Z',
    commit: 'abc1234',
    node: 'v20.20.2',
    peers: { opossum: '9.0.0', cockatiel: '3.2.1' },
    seed: 7,
    results: cells.flatMap(([scenario, implementation]) =>
      figures(scenario, implementation).map((f) => outcome(scenario, implementation, f)),
    ),
  };
}

describe('the protection summary (bench/protection/summary.mjs)', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('renders a full run of the committed history (9a131f8) as README showed it', () => {
    const log = fileURLToPath(
      new URL('../../bench/results/protection-history.jsonl', import.meta.url),
    );
    const run = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as ProtectionRun)
      .find((line) => line.kind === 'protection' && line.commit === '9a131f8');
    expect(renderSummary(run!).split('\n')).toEqual([
      '| scenario: figure | no breaker | opossum 9 | cockatiel `Consecutive(5)` | cockatiel `Sampling` + 2 s timeout | this package |',
      '| :--- | ---: | ---: | ---: | ---: | ---: |',
      '| 1. hard outage: calls wasted on the dead dependency | 7,124 | 491 | 17 | 615 | 22 |',
      '| 1. hard outage: seconds to recover | 0 | 16.1 | 4.0 | 4.8 | 4.2 (1.2 with `healthCheck`) |',
      '| 2b. hung, calls not cancelled: peak calls in flight | 8,258 | 1,458 | 8,258 | 236 | 202 |',
      '| 3. brownout (30 % 5xx): goodput, calls/s | 76.6 | 76.6 | 34.5 | 41.7 | 76.6 |',
      '| 6. retry storm: seconds to recover | never | 26.0 | 2.3 | 5.5 | 2.5 |',
      '| 9. fleet of 10 replicas: calls wasted | 7,124 | 493 | 115 | 7,124 | 165 (77 shared) |',
      '',
      'From the run of 2026-12-03 (commit 9a131f8, Node 20.20.2, opossum 9.0.0, cockatiel 3.2.1, seed 1).',
    ]);
  });

  it('README.md and docs/benchmarks.md hold what the latest run renders (node bench/protection/summary.mjs --write)', () => {
    const summary = renderSummary(latestRun());
    const root = fileURLToPath(new URL('../../', import.meta.url));
    expect(SUMMARY_PAGES).toEqual([join(root, 'README.md'), join(root, 'docs/benchmarks.md')]);
    for (const file of SUMMARY_PAGES) {
      const page = readFileSync(file, 'utf8');
      expect(withSummary(page, summary, file)).toBe(page);
    }
  });

  it('takes the latest full run by date, skipping candidate and quick runs', () => {
    dir = mkdtempSync(join(tmpdir(), 'protection-summary-'));
    const log = join(dir, 'history.jsonl');
    const base = syntheticRun(() => [{}]);
    const lines = [
      { ...base, date: '2026-12-02T00:00:00.000Z', commit: 'full-2' },
      { ...base, date: '2026-12-01T00:00:00.000Z', commit: 'full-1' },
      { ...base, date: '2026-12-03T00:00:00.000Z', commit: 'quick', mode: 'quick' },
      { ...base, date: '2026-12-04T00:00:00.000Z', commit: 'cand', kind: 'protection-candidates' },
    ];
    writeFileSync(log, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n\n`);
    expect(latestRun(log).commit).toBe('full-2');
    writeFileSync(log, `${JSON.stringify(lines[2])}\n`);
    expect(() => latestRun(log)).toThrow(`${log} holds no full run of bench:protection`);
  });

  it('means over swept lengths, the largest peak, and says when a recovery never came', () => {
    const run = syntheticRun((scenario, implementation) => {
      if (scenario === '1' && implementation === 'ours')
        return [
          { wasted: 20, recoverMs: 4_000 },
          { wasted: 21, recoverMs: null },
        ];
      if (scenario === '2b' && implementation === 'ours')
        return [{ peakInFlight: 150 }, { peakInFlight: 1_202 }];
      if (scenario === '6' && implementation === 'opossum') return [{ recoverMs: null }];
      return [{ wasted: 1_500, recoverMs: 2_250, goodput: 41.66 }];
    });
    const rows = renderSummary(run).split('\n');
    expect(rows[2]).toBe(
      '| 1. hard outage: calls wasted on the dead dependency | 1,500 | 1,500 | 1,500 | 1,500 | 21 |',
    );
    expect(rows[3]).toBe(
      '| 1. hard outage: seconds to recover | 2.3 | 2.3 | 2.3 | 2.3 | 4.0 (never in 1 of 2) (2.3 with `healthCheck`) |',
    );
    expect(rows[4]).toBe(
      '| 2b. hung, calls not cancelled: peak calls in flight | 0 | 0 | 0 | 0 | 1,202 |',
    );
    expect(rows[6]).toBe('| 6. retry storm: seconds to recover | 2.3 | never | 2.3 | 2.3 | 2.3 |');
    expect(rows[9]).toBe(
      'From the run of 2026-12-01 (commit abc1234, Node 20.20.2, opossum 9.0.0, cockatiel 3.2.1, seed 7).',
    );
  });

  it('replaces only the block between the markers, and refuses a page without one', () => {
    const page = `# Title\n\n${SUMMARY_START}\n\nold table\n\n${SUMMARY_END}\n\nAfter.\n`;
    expect(withSummary(page, 'new table')).toBe(
      `# Title\n\n${SUMMARY_START}\n\nnew table\n\n${SUMMARY_END}\n\nAfter.\n`,
    );
    expect(() => withSummary('# Title\n', 'new table', 'page.md')).toThrow(
      `page.md has no ${SUMMARY_START} ... ${SUMMARY_END} block`,
    );
  });
});
