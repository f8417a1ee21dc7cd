import { describe, expect, it } from 'vitest';
import { baseOpenDuration, openDuration } from '../../lib/core/state/open-duration.js';
import { resolveBreakerOptions } from '../../lib/core/options/resolve-options.js';

const fixed = (value: number) => ({ draw: () => value });

describe('open duration (backoff, jitter, Retry-After)', () => {
  const config = resolveBreakerOptions('backoff', {
    openDurationMs: 1_000,
    backoff: { multiplier: 2, maxMs: 5_000 },
    jitter: 0,
    maxRetryAfterMs: 60_000,
  });

  it('doubles with each reopening in a row, up to backoff.maxMs', () => {
    expect([0, 1, 2, 3, 4].map((reopens) => baseOpenDuration(config, reopens))).toEqual([
      1_000, 2_000, 4_000, 5_000, 5_000,
    ]);
  });

  it('waits at least what the dependency asked for, capped by maxRetryAfterMs', () => {
    expect(openDuration(config, 0, fixed(0.5), 30_000)).toBe(30_000);
    expect(openDuration(config, 0, fixed(0.5), 500)).toBe(1_000);
    expect(openDuration(config, 0, fixed(0.5), 120_000)).toBe(60_000);
  });

  it('spreads by ±jitter around the backoff, in whole milliseconds', () => {
    const jittered = resolveBreakerOptions('jitter', { openDurationMs: 1_000, jitter: 0.2 });
    expect([0, 0.5, 0.999].map((r) => openDuration(jittered, 0, fixed(r), undefined))).toEqual([
      800, 1_000, 1_200,
    ]);
  });
});
