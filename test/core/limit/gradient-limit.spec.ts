/**
 * The gradient limit, latency sequences in and limits out (a manual timeline:
 * requests end every 50 ms, so 21 of them close a window of 1 s), including
 * each known failure mode of latency-following limits. The noisy cases use
 * Netflix's Example.java latency: lognormal, sigma 1, from a fixed seed.
 */
import { describe, expect, it } from 'vitest';
import { GradientLimit } from '../../../lib/core/limit/gradient-limit.js';
import type { ResolvedLimitOptions } from '../../../lib/core/limit/limit-options.js';
import { Feed, flat, limitOptions, lognormalNoise, mean, queued } from './limit-feed.js';

function gradient(given: Partial<ResolvedLimitOptions> = {}): GradientLimit {
  return new GradientLimit(limitOptions({ algorithm: 'gradient', ...given }));
}

/** `count` windows of `n` noisy requests each on a saturated server of 10 places, 20 ms each; `baseMs(i)` may change. */
function noisyRun(
  limit: GradientLimit,
  count: number,
  seed: number,
  baseMs: (index: number) => number = () => 20,
  n = 101,
): number[] {
  const noise = lognormalNoise(seed);
  const feed = new Feed(limit, 1000 / (n - 1));
  return feed.saturated(count, (current, i) =>
    Array.from({ length: n }, () => queued(baseMs(i), 10, current) * noise()),
  );
}

describe('GradientLimit', () => {
  it('keeps its initial limit until a first window closes, which sets the no-load latency', () => {
    const limit = gradient();
    const feed = new Feed(limit);
    expect(feed.window(flat(20, 20), 20)).toBe(20);
    expect(limit.baselineMs).toBeNaN();
    expect(feed.window(flat(20, 1), 20)).toBe(20);
    expect(limit.baselineMs).toBeCloseTo(20, 9);
  });

  it('grows while latency stays at the no-load latency and the limit is used, faster each window', () => {
    const feed = new Feed(gradient());
    expect(feed.saturated(12, () => flat(20))).toEqual([
      20, 20, 20, 21, 23, 26, 34, 48, 72, 108, 163, 245,
    ]);
  });

  it('does not grow while fewer than half its places are used (app-limited)', () => {
    const feed = new Feed(gradient());
    feed.window(flat(20), 20);
    const limits = Array.from({ length: 30 }, () => feed.window(flat(20), 5));
    expect(new Set(limits)).toEqual(new Set([20]));
  });

  it('comes down with the gradient when latency doubles, at most a quarter a window', () => {
    const feed = new Feed(gradient());
    feed.window(flat(20), 20);
    expect(Array.from({ length: 6 }, () => feed.window(flat(40), 20))).toEqual([
      15, 11, 8, 6, 4, 3,
    ]);
  });

  it('takes a tenth off for a window with a dropped request', () => {
    const feed = new Feed(gradient());
    feed.window(flat(20), 20);
    expect([feed.window(flat(20), 20, 3), feed.window(flat(20), 20, 3)]).toEqual([18, 16]);
  });

  it('settles at the capacity of a saturated server and stays there', () => {
    const feed = new Feed(gradient({ initialLimit: 5 }));
    const limits = feed.saturated(600, (current) => flat(queued(20, 10, current)));
    expect(limits.slice(0, 12)).toEqual([5, 5, 5, 5, 6, 8, 12, 11, 10, 10, 11, 10]);
    expect(new Set(limits.slice(8))).toEqual(new Set([10, 11]));
  });

  describe('the known failure modes', () => {
    it('does not creep up under sustained overload (Netflix/concurrency-limits#134)', () => {
      // Every request finds the limit full for 10 minutes: loaded latency all the way, the worst case for a
      // baseline that follows what it sees.
      const limit = gradient({ initialLimit: 5 });
      const limits = noisyRun(limit, 600, 7);
      const minutes = Array.from({ length: 10 }, (_, m) =>
        mean(limits.slice(m * 60, m * 60 + 60)).toFixed(2),
      );
      // Level from the seventh minute on; a little above the capacity of 10 (a limit of 11 or 12 is slower by
      // about one standard error of a window, noise: only a window slower beyond its noise restarts growth).
      expect(minutes).toEqual([
        '10.40',
        '7.32',
        '10.72',
        '9.95',
        '10.90',
        '11.37',
        '12.48',
        '11.97',
        '12.15',
        '12.03',
      ]);
      expect(Math.max(...limits)).toBe(18);
    });

    it('keeps its no-load latency while loaded: the baseline does not drift up with load (#165)', () => {
      const limit = gradient({ initialLimit: 5 });
      noisyRun(limit, 600, 7);
      // The lognormal's geometric mean is 20 ms / e^0.5 = 12.13 ms.
      expect(limit.baselineMs.toFixed(2)).toBe('13.59');
    });

    it('is not moved by one lucky fast request (#37)', () => {
      const limit = gradient();
      const feed = new Feed(limit);
      feed.saturated(3, () => flat(20));
      const lucky = flat(20);
      lucky[5] = 1;
      expect(feed.window(lucky, 20)).toBe(21);
      expect(limit.baselineMs).toBeCloseTo(20, 9);
    });

    it('takes a slower baseline only from windows at no more requests in flight (on average)', () => {
      const limit = gradient({ initialLimit: 10, minLimit: 10, maxLimit: 10 });
      const feed = new Feed(limit);
      feed.window(flat(20), 10);
      // Slower at twice the requests in flight: queueing, never a baseline, however long it lasts.
      for (let i = 0; i < 60; i++) feed.window(flat(40), 20);
      expect(limit.baselineMs).toBeCloseTo(20, 9);
      // Slower at no more in flight on average (9.5, though one request saw 20): the latency without load
      // rose. It is taken once the windows at 20 in flight have left both spans (of 20 windows each).
      const inFlight = [20, ...flat(9, 20)];
      let windows = 0;
      while (limit.baselineMs < 39 && windows < 60) {
        feed.window(flat(40), inFlight);
        windows++;
      }
      expect(windows).toBe(20);
      expect(limit.baselineMs).toBeCloseTo(40, 5);
    });

    it('learns a real rise of latency (every request twice as slow after a deploy) and recovers', () => {
      const limit = gradient({ initialLimit: 5 });
      const feed = new Feed(limit);
      const limits = feed.saturated(200, (current, i) =>
        flat(queued(i >= 60 ? 40 : 20, 10, current)),
      );
      // Down to the floor while the old baseline stands (it was measured at more requests in flight than
      // the slow latency), then the slow latency at the floor becomes the baseline, and the limit climbs back.
      expect(limits.slice(58, 92)).toEqual([
        10, 10, 8, 6, 4, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 5, 8,
        12, 11, 11, 11,
      ]);
      expect(new Set(limits.slice(95))).toEqual(new Set([10, 11]));
      expect(limit.baselineMs).toBeCloseTo(40, 5);
    });

    it('learns a real rise of noisy latency too, back to the capacity within 100 windows', () => {
      const limit = gradient({ initialLimit: 5 });
      const limits = noisyRun(limit, 300, 5, (i) => (i >= 60 ? 40 : 20));
      expect(Math.min(...limits.slice(160))).toBe(10);
      expect(mean(limits.slice(200)).toFixed(2)).toBe('11.77');
    });

    it('has no periodic dips while it re-measures (Envoy #9007, #11579): never below 7 of 10 in 10 minutes', () => {
      const limits = noisyRun(gradient({ initialLimit: 10 }), 600, 7);
      expect(Math.min(...limits)).toBe(7);
      // Deterministic latency: the limit never leaves 10..11 once there (above), span after span.
    });

    it('does not collapse after a 500 ms stall of every request in flight', () => {
      const feed = new Feed(gradient({ initialLimit: 5 }));
      const limits = feed.saturated(100, (current, i) => {
        const rtts = flat(queued(20, 10, current));
        if (i === 60) for (let k = 0; k < Math.min(current, rtts.length); k++) rtts[k]! += 500;
        return rtts;
      });
      expect(limits.slice(58, 68)).toEqual([10, 10, 8, 8, 8, 9, 10, 12, 11, 11]);
    });

    it('does not collapse after a stall of noisy latency either', () => {
      const noise = lognormalNoise(11);
      const feed = new Feed(gradient({ initialLimit: 5 }), 10);
      const limits = feed.saturated(200, (current, i) => {
        const rtts = Array.from({ length: 101 }, () => queued(20, 10, current) * noise());
        if (i === 100) for (let k = 0; k < current; k++) rtts[k]! += 500;
        return rtts;
      });
      expect(limits.slice(98, 106)).toEqual([11, 10, 10, 10, 10, 10, 11, 11]);
    });
    it('climbs back after a cut while windows at the no-load latency read slower by noise (retry storm)', () => {
      // Windows of 21 requests, 10 at ms * e^-0.5, 10 at ms * e^0.5 and one at ms: a geometric mean of ms and a
      // standard error of se (in logarithms). The first sets the baseline at its upper bound, 20 ms * e^(2 se);
      // twice that latency cuts the limit; then the service is back, each window's mean one standard error
      // above or below the baseline: noise. A window one above reads as slower than the baseline (by half a
      // standard error) and moves the limit, but is no reason to start growth again from its smallest step.
      const noisy = (ms: number): number[] => [
        ms,
        ...Array.from({ length: 20 }, (_, i) => ms * Math.exp(i % 2 === 0 ? -0.5 : 0.5)),
      ];
      const se = (0.5 * Math.sqrt(20)) / 21;
      const limit = gradient();
      const feed = new Feed(limit);
      feed.window(noisy(20), 20);
      expect(limit.baselineMs).toBeCloseTo(20 * Math.exp(2 * se), 9);
      expect(feed.saturated(6, () => flat(40))).toEqual([16, 13, 10, 8, 7, 5]);
      const back = feed.saturated(12, (_, i) => noisy(20 * Math.exp((i % 2 === 0 ? 3 : 1) * se)));
      // Restarting growth after every window one above, the limit stayed at 5 and 6.
      expect(back).toEqual([5, 5, 5, 6, 6, 6, 6, 7, 7, 9, 9, 12]);
    });
  });

  it('stays finite with latencies of 0 ms', () => {
    const limit = gradient();
    const feed = new Feed(limit);
    expect(feed.window(flat(0), 20)).toBe(20);
    expect(limit.baselineMs).toBeCloseTo(0.001, 9);
    expect([feed.window(flat(20), 20), feed.window(flat(0), 20)]).toEqual([15, 15]);
  });
});
