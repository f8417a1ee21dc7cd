import { describe, expect, it } from 'vitest';
import { Breaker, BreakerConfigError, type BreakerOptions } from '../../lib/core/index.js';

const build = (options: unknown) => () => new Breaker('payments', options as BreakerOptions);

describe('Breaker option validation', () => {
  it.each([
    [
      { failureRateThreshold: 1.5 },
      'Circuit breaker "payments": option "failureRateThreshold" must be a number in (0, 1], got 1.5.',
    ],
    [
      { failureRateThreshold: 0 },
      'Circuit breaker "payments": option "failureRateThreshold" must be a number in (0, 1], got 0.',
    ],
    [
      { minimumThroughput: 0 },
      'Circuit breaker "payments": option "minimumThroughput" must be an integer >= 1, got 0.',
    ],
    [
      { minimumThroughput: 2.5 },
      'Circuit breaker "payments": option "minimumThroughput" must be an integer >= 1, got 2.5.',
    ],
    [
      { consecutiveFailures: -1 },
      'Circuit breaker "payments": option "consecutiveFailures" must be an integer >= 1, or false for no consecutive rule, got -1.',
    ],
    [
      { consecutiveFailures: 0 },
      'Circuit breaker "payments": option "consecutiveFailures" must be an integer >= 1, or false for no consecutive rule, got 0.',
    ],
    [
      { timeoutMs: 0 },
      'Circuit breaker "payments": option "timeoutMs" must be a positive number of milliseconds up to 2147483647, or false for no deadline, got 0.',
    ],
    [
      { timeoutMs: 2 ** 31 },
      'Circuit breaker "payments": option "timeoutMs" must be a positive number of milliseconds up to 2147483647, or false for no deadline, got 2147483648.',
    ],
    [
      { slowCallDurationMs: Infinity },
      'Circuit breaker "payments": option "slowCallDurationMs" must be a positive, finite number of milliseconds, got Infinity.',
    ],
    [
      { openDurationMs: Number.NaN },
      'Circuit breaker "payments": option "openDurationMs" must be a finite number of milliseconds >= 0, got NaN.',
    ],
    [
      { jitter: 2 },
      'Circuit breaker "payments": option "jitter" must be a number in [0, 1], got 2.',
    ],
    [
      { window: { type: 'count', size: 0 } },
      'Circuit breaker "payments": option "window.size" must be an integer in [1, 1000000], got 0.',
    ],
    [
      { window: { type: 'sliding' } },
      `Circuit breaker "payments": option "window.type" must be 'count' or 'time', got "sliding".`,
    ],
    [
      { window: { type: 'time', durationMs: 1000, buckets: 0 } },
      'Circuit breaker "payments": option "window.buckets" must be an integer in [1, 1000], got 0.',
    ],
    [
      { window: { type: 'count', size: 5 }, minimumThroughput: 6 },
      'Circuit breaker "payments": option "minimumThroughput" (6) cannot exceed window.size (5): the window could never hold enough calls to judge a rate. Lower "minimumThroughput" or enlarge the window.',
    ],
    [
      { slowCallRateThreshold: 0.5 },
      'Circuit breaker "payments": option "slowCallRateThreshold" needs "slowCallDurationMs": without it no call is ever slow. Set "slowCallDurationMs" too, or remove "slowCallRateThreshold".',
    ],
    [
      { halfOpen: { maxProbes: 2, maxConcurrent: 3 } },
      'Circuit breaker "payments": option "halfOpen.maxConcurrent" (3) cannot exceed "halfOpen.maxProbes" (2). Lower "halfOpen.maxConcurrent" or raise "halfOpen.maxProbes".',
    ],
    [
      { halfOpen: { maxProbes: 2, successesToClose: 3 } },
      'Circuit breaker "payments": option "halfOpen.successesToClose" (3) cannot exceed "halfOpen.maxProbes" (2): the breaker could never close. Lower "halfOpen.successesToClose" or raise "halfOpen.maxProbes".',
    ],
    [
      { backoff: { multiplier: 0.5 } },
      'Circuit breaker "payments": option "backoff.multiplier" must be a finite number >= 1, got 0.5.',
    ],
    [
      { openDurationMs: 10_000, backoff: { maxMs: 5_000 } },
      'Circuit breaker "payments": option "backoff.maxMs" (5000) is below "openDurationMs" (10000): the cap would shorten the first open period. Raise "backoff.maxMs" to at least 10000.',
    ],
    [
      { overload: { k: 0.5 } },
      'Circuit breaker "payments": option "overload.k" must be a finite number >= 1 (or overload: false), got 0.5.',
    ],
    [
      { classify: 'http' },
      'Circuit breaker "payments": option "classify" must be a function, got "http".',
    ],
    [
      { failureThreshold: 0.5 },
      expect.stringContaining(
        'Circuit breaker "payments": unknown option "failureThreshold". Known options: window, failureRateThreshold,',
      ),
    ],
    [
      { halfOpen: { probes: 3 } },
      expect.stringContaining(
        'Circuit breaker "payments": unknown option "halfOpen.probes". Known options: halfOpen.maxProbes,',
      ),
    ],
    [
      null,
      'Circuit breaker "payments": option "options" must be an object, got null. Leave the option out (or undefined) to use its default.',
    ],
  ])('%j', (options, message) => {
    let error: unknown;
    try {
      build(options)();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BreakerConfigError);
    expect((error as BreakerConfigError).message).toEqual(message);
    expect((error as BreakerConfigError).breakerName).toBe('payments');
  });

  it('names the option on the error', () => {
    expect(build({ halfOpen: { maxProbes: 0 } })).toThrow(
      expect.objectContaining({ option: 'halfOpen.maxProbes', code: 'BREAKER_CONFIG' }),
    );
  });

  it('applies the documented defaults', () => {
    const { config } = new Breaker('defaults');
    expect(config).toMatchObject({
      window: { type: 'count', size: 100 },
      rateRule: true,
      failureRateThreshold: 0.5,
      minimumThroughput: 20,
      // An all-failing burst trips after 10 calls, before the rate rule has its 20.
      consecutiveFailures: 10,
      // A hung dependency is the most common outage: every asynchronous call has a deadline unless turned off.
      timeoutMs: 2_000,
      openDurationMs: 10_000,
      backoffMultiplier: 1,
      backoffMaxMs: Infinity,
      jitter: 0,
      maxRetryAfterMs: 300_000,
      maxProbes: 1,
      maxConcurrentProbes: 1,
      successesToClose: 1,
      probeTimeoutMs: 2_000,
      probeMaxWaitMs: 2_000,
      overloadK: 2,
    });
  });

  it('consecutiveFailures: false turns the default streak off and keeps the rate rule', () => {
    expect(new Breaker('rate-only', { consecutiveFailures: false }).config).toMatchObject({
      consecutiveFailures: undefined,
      rateRule: true,
      failureRateThreshold: 0.5,
    });
  });

  it('a streak given alone is the only trip rule; beside a rate option, both apply', () => {
    expect(new Breaker('streak', { consecutiveFailures: 3 }).config).toMatchObject({
      consecutiveFailures: 3,
      rateRule: false,
    });
    expect(
      new Breaker('both', { consecutiveFailures: 3, failureRateThreshold: 0.4 }).config,
    ).toMatchObject({ consecutiveFailures: 3, rateRule: true, failureRateThreshold: 0.4 });
    expect(new Breaker('rate', { failureRateThreshold: 0.4 }).config).toMatchObject({
      consecutiveFailures: 10,
      rateRule: true,
    });
  });

  it('timeoutMs: false turns the default deadline off, and with it the probe deadline it gave', () => {
    expect(new Breaker('none', { timeoutMs: false }).config).toMatchObject({
      timeoutMs: undefined,
      probeTimeoutMs: undefined,
      probeMaxWaitMs: 60_000,
    });
    expect(
      new Breaker('probe-only', { timeoutMs: false, halfOpen: { probeTimeoutMs: 500 } }).config,
    ).toMatchObject({ timeoutMs: undefined, probeTimeoutMs: 500 });
  });

  it('derives dependent defaults: the probe timeout and wait from timeoutMs, the minimum from a small window', () => {
    expect(new Breaker('t', { timeoutMs: 2_000 }).config).toMatchObject({
      probeTimeoutMs: 2_000,
      probeMaxWaitMs: 2_000,
    });
    expect(new Breaker('s', { window: { type: 'count', size: 10 } }).config.minimumThroughput).toBe(
      10,
    );
    expect(new Breaker('w', { slowCallDurationMs: 500 }).config.slowCallRateThreshold).toBe(1);
    expect(new Breaker('h', { halfOpen: { maxProbes: 3 } }).config).toMatchObject({
      maxConcurrentProbes: 1,
      successesToClose: 3,
    });
  });

  it('rejects an empty name', () => {
    expect(() => new Breaker('')).toThrow(
      new TypeError(
        'A circuit breaker needs a non-empty string name, got "". Name it after the dependency and operation it protects, e.g. "payments.charge".',
      ),
    );
  });
});
