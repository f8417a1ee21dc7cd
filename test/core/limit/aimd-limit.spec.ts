/** The AIMD limit: samples in, limits out. */
import { describe, expect, it } from 'vitest';
import { AimdLimit } from '../../../lib/core/limit/aimd-limit.js';
import type { ResolvedLimitOptions } from '../../../lib/core/limit/limit-options.js';
import { limitOptions } from './limit-feed.js';

function aimd(given: Partial<ResolvedLimitOptions> = {}): AimdLimit {
  return new AimdLimit(limitOptions({ algorithm: 'aimd', initialLimit: 10, ...given }));
}

/** `count` good samples ending 1 ms apart from `from`, each with `inFlight` places held; the limit after each. */
function good(limit: AimdLimit, count: number, inFlight: number, from = 0): number[] {
  return Array.from({ length: count }, (_, i) => {
    limit.sample(from + i, 20, inFlight, false);
    return limit.limit;
  });
}

describe('AimdLimit', () => {
  it('grows by one for each limit of good samples while at least half the limit is in flight', () => {
    const limit = aimd();
    const limits = good(limit, 21, 6);
    expect(limits.slice(8, 11)).toEqual([10, 11, 11]);
    expect(limits.slice(19)).toEqual([11, 12]);
  });

  it('does not grow while fewer than half its places are used', () => {
    const limit = aimd();
    expect(new Set(good(limit, 100, 4))).toEqual(new Set([10]));
  });

  it('takes a tenth off for a drop, rounding down, and starts counting again', () => {
    const limit = aimd({ initialLimit: 20 });
    good(limit, 5, 20);
    limit.sample(100, 1000, 20, true);
    expect(limit.limit).toBe(18);
    expect(good(limit, 18, 20, 2000).slice(16)).toEqual([18, 19]);
  });

  it('cuts once for a burst of drops of requests that started before the cut', () => {
    const limit = aimd({ initialLimit: 20 });
    // Ten requests start at 0..9 and all time out at 1000..1009: one overload event.
    for (let i = 0; i < 10; i++) limit.sample(i, 1000, 20, true);
    expect(limit.limit).toBe(18);
    // One that started after the first cut (at 1000) and drops is a new event.
    limit.sample(1001, 1000, 18, true);
    expect(limit.limit).toBe(16);
  });

  it('stays within its bounds', () => {
    const low = aimd({ initialLimit: 2, minLimit: 2 });
    low.sample(0, 10, 2, true);
    expect(low.limit).toBe(2);
    const high = aimd({ initialLimit: 10, maxLimit: 10 });
    expect(new Set(good(high, 50, 10))).toEqual(new Set([10]));
  });
});
