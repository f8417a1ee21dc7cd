import { describe, expect, it } from 'vitest';
import { Breaker, BreakerConfigError, type BreakerOptions } from '../../lib/core/index.js';

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

  it('options objects used in turn still share a config each', () => {
    const read: BreakerOptions = { timeoutMs: 1_000 };
    const write: BreakerOptions = { timeoutMs: 5_000 };
    const configs = ['a', 'b', 'c'].flatMap((svc) => [
      new Breaker(`${svc}-read`, read).config,
      new Breaker(`${svc}-write`, write).config,
    ]);
    expect(configs.map((config) => config.timeoutMs)).toEqual([
      1_000, 5_000, 1_000, 5_000, 1_000, 5_000,
    ]);
    expect(configs[2]).toBe(configs[0]);
    expect(configs[4]).toBe(configs[0]);
    expect(configs[3]).toBe(configs[1]);
    expect(configs[5]).toBe(configs[1]);
  });

  it('an options object whose getter throws when read again: a BreakerConfigError naming the option, never its error', () => {
    let reads = 0;
    const options = {
      get timeoutMs() {
        reads++;
        if (reads > 1) throw new Error('gone');
        return 100;
      },
    } as BreakerOptions;
    const outcomes = ['first', 'second'].map((name) => {
      try {
        return new Breaker(name, options).config.timeoutMs;
      } catch (error) {
        return error;
      }
    });
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome === 100) continue;
      expect(outcome).toBeInstanceOf(BreakerConfigError);
      expect(outcome).toMatchObject({
        option: 'timeoutMs',
        message: expect.stringMatching(
          new RegExp(
            `^Circuit breaker "${['first', 'second'][index]}": option "timeoutMs" could not be read \\(Error: gone\\)`,
          ),
        ),
      });
    }
    expect(outcomes.filter((outcome) => outcome !== 100)).not.toEqual([]);
  });

  it('a new object that says what the last one said shares its config; one that does not is resolved', () => {
    const make = (maxProbes: unknown) =>
      new Breaker('svc', { timeoutMs: 1_000, halfOpen: { maxProbes } } as BreakerOptions);
    const first = make(2);
    expect(make(2).config).toBe(first.config);
    expect(make(3).config.maxProbes).toBe(3);
    expect(() => make(new Date(0))).toThrow(
      expect.objectContaining({ name: 'BreakerConfigError', option: 'halfOpen.maxProbes' }),
    );
    const dated = { timeoutMs: 1_000, halfOpen: new Date(0) } as unknown as BreakerOptions;
    expect(new Breaker('plain', { timeoutMs: 1_000, halfOpen: {} }).config.maxProbes).toBe(1);
    expect(() => new Breaker('dated', dated)).toThrow(
      expect.objectContaining({ name: 'BreakerConfigError', option: 'halfOpen' }),
    );
  });
});
