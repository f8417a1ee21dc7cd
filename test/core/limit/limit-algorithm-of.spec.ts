/** Which algorithm a limiter's options build, and the default. */
import { describe, expect, it } from 'vitest';
import { AimdLimit } from '../../../lib/core/limit/aimd-limit.js';
import { ConcurrencyLimiter } from '../../../lib/core/limit/concurrency-limiter.js';
import { GradientLimit } from '../../../lib/core/limit/gradient-limit.js';
import { limitAlgorithmOf } from '../../../lib/core/limit/limit-algorithm-of.js';
import { LIMIT_DEFAULTS } from '../../../lib/core/limit/limit-options.js';
import { limitOptions } from './limit-feed.js';

describe('limitAlgorithmOf', () => {
  it("builds the gradient limit for 'gradient' and the AIMD limit for 'aimd', at the initial limit", () => {
    const gradient = limitAlgorithmOf(limitOptions({ algorithm: 'gradient', initialLimit: 7 }));
    expect(gradient).toBeInstanceOf(GradientLimit);
    expect(gradient.limit).toBe(7);
    const aimd = limitAlgorithmOf(limitOptions({ algorithm: 'aimd', initialLimit: 7 }));
    expect(aimd).toBeInstanceOf(AimdLimit);
    expect(aimd.limit).toBe(7);
  });

  it("makes 'gradient' the default", () => {
    expect(LIMIT_DEFAULTS.algorithm).toBe('gradient');
    expect(new ConcurrencyLimiter('api').snapshot().algorithm).toBe('gradient');
  });
});
