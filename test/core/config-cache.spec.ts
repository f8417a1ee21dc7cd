import { describe, expect, it } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';

describe('shared configs', () => {
  it('breakers built from the same options, or from none, share one config', () => {
    expect(new Breaker('a').config).toBe(new Breaker('b').config);
    const options: BreakerOptions = {
      window: { type: 'time', durationMs: 10_000 },
      halfOpen: { maxProbes: 2 },
    };
    expect(new Breaker('c', options).config).toBe(new Breaker('d', options).config);
  });

  it('a changed options object is read again, and validated again with the new name', () => {
    const options: BreakerOptions = { timeoutMs: 100, halfOpen: { maxProbes: 1 } };
    const first = new Breaker('first', options);
    options.timeoutMs = 200;
    expect(new Breaker('second', options).config.timeoutMs).toBe(200);
    options.halfOpen!.maxProbes = 3;
    expect(new Breaker('third', options).config.maxProbes).toBe(3);
    expect(first.config.timeoutMs).toBe(100);
    options.jitter = 5;
    expect(() => new Breaker('fourth', options)).toThrow(
      expect.objectContaining({
        name: 'BreakerConfigError',
        option: 'jitter',
        message: 'Circuit breaker "fourth": option "jitter" must be a number in [0, 1], got 5.',
      }),
    );
  });
});
