/**
 * Any sample sequence (fixed seed): the AIMD and gradient limits stay integers
 * within [minLimit, maxLimit] after every sample, whatever the latencies
 * (0 ms, fractions, huge values, the largest double), in-flight counts and
 * drops, and in whatever order the requests end.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AimdLimit } from '../../../lib/core/limit/aimd-limit.js';
import { GradientLimit } from '../../../lib/core/limit/gradient-limit.js';
import type { LimitAlgorithm } from '../../../lib/core/limit/limit-algorithm.js';
import type { ResolvedLimitOptions } from '../../../lib/core/limit/limit-options.js';
import { limitOptions } from './limit-feed.js';

const SEED = 20_261_206;

const bounds = fc
  .tuple(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 200 }), fc.nat(1000))
  .map(([minLimit, span, at]) => ({
    minLimit,
    maxLimit: minLimit + span,
    initialLimit: minLimit + (at % (span + 1)),
  }));

const rtt = fc.oneof(
  fc.constantFrom(0, 0.0001, 1, 20, 500, 1e12, Number.MAX_VALUE),
  fc.double({ min: 0, max: 1e6, noNaN: true }),
  fc.double({ min: 0, noNaN: true }),
);

const sample = fc.record({
  gapMs: fc.oneof(fc.constant(0), fc.nat(2000), fc.double({ min: 0, max: 1e7, noNaN: true })),
  rttMs: rtt,
  inFlight: fc.integer({ min: 1, max: 2000 }),
  dropped: fc.boolean(),
});

function holds(build: (options: ResolvedLimitOptions) => LimitAlgorithm): void {
  fc.assert(
    fc.property(bounds, fc.array(sample, { maxLength: 400 }), (given, samples) => {
      const algorithm = build(limitOptions(given));
      let now = 0;
      const check = (): void => {
        const { limit } = algorithm;
        expect(Number.isInteger(limit)).toBe(true);
        expect(limit).toBeGreaterThanOrEqual(given.minLimit);
        expect(limit).toBeLessThanOrEqual(given.maxLimit);
      };
      check();
      for (const { gapMs, rttMs, inFlight, dropped } of samples) {
        now += gapMs;
        algorithm.sample(now, rttMs, inFlight, dropped);
        check();
      }
    }),
    { seed: SEED, numRuns: 300 },
  );
}

describe('limit algorithms under any sample sequence', () => {
  it('AimdLimit keeps an integer limit within its bounds', () => {
    holds((options) => new AimdLimit(options));
  });

  it('GradientLimit keeps an integer limit within its bounds, and a finite baseline once it has one', () => {
    holds((options) => new GradientLimit(options));
    fc.assert(
      fc.property(fc.array(rtt, { minLength: 21, maxLength: 200 }), (rtts) => {
        const limit = new GradientLimit(limitOptions({ algorithm: 'gradient' }));
        rtts.forEach((ms, i) => limit.sample(i * 100 - Math.min(ms, 1e9), ms, 20, false));
        expect(Number.isFinite(limit.baselineMs)).toBe(true);
        expect(Number.isInteger(limit.limit)).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
