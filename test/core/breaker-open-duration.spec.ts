import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { sequence } from '../helpers/random-sequence.js';

const failWith = (breaker: Breaker, error: unknown = new Error('down')) =>
  breaker.execute(() => Promise.reject(error)).catch(() => undefined);

describe('Breaker open duration', () => {
  it('defaults to 10 s', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('default', { consecutiveFailures: 1 }, { clock });
    await failWith(breaker);
    expect(breaker.snapshot().openUntil).toBe(clock.now() + 10_000);
  });

  it('grows by the backoff multiplier on each consecutive reopen, up to maxMs, and resets on close', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'backoff',
      { consecutiveFailures: 1, openDurationMs: 1_000, backoff: { multiplier: 2, maxMs: 5_000 } },
      { clock },
    );
    await failWith(breaker);
    const durations: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { openUntil, since } = breaker.snapshot();
      durations.push(openUntil! - since);
      clock.set(openUntil!);
      await failWith(breaker); // the probe fails: reopen
    }
    expect(durations).toEqual([1_000, 2_000, 4_000, 5_000]);
    clock.set(breaker.snapshot().openUntil!);
    await breaker.execute(() => 'recovered');
    expect(breaker.state).toBe('closed');
    await failWith(breaker);
    const { openUntil, since } = breaker.snapshot();
    expect(openUntil! - since).toBe(1_000);
  });

  it('draws each open duration uniformly from [d(1 − jitter), d(1 + jitter)]', async () => {
    const clock = new ManualClock();
    const openFor = async (random: number) => {
      const breaker = new Breaker(
        'jitter',
        { consecutiveFailures: 1, openDurationMs: 10_000, jitter: 0.2 },
        { clock, random: () => random },
      );
      await failWith(breaker);
      return breaker.snapshot().openUntil! - clock.now();
    };
    expect(await openFor(0)).toBe(8_000);
    expect(await openFor(0.5)).toBe(10_000);
    expect(await openFor(0.999_999)).toBeCloseTo(12_000, 1);
  });

  it('keeps the breaker open for max(computed, Retry-After) when the tripping failure carries a hint', async () => {
    const clock = new ManualClock();
    const longHint = new Breaker(
      'hint',
      { consecutiveFailures: 1, openDurationMs: 1_000, overload: false },
      { clock },
    );
    await failWith(longHint, httpError(503, { 'retry-after': '20' }));
    expect(longHint.snapshot().openUntil).toBe(clock.now() + 20_000);

    const shortHint = new Breaker(
      'short-hint',
      { consecutiveFailures: 1, openDurationMs: 5_000 },
      { clock },
    );
    await failWith(shortHint, Object.assign(new Error('x'), { retryAfterMs: 100 }));
    expect(shortHint.snapshot().openUntil).toBe(clock.now() + 5_000);
  });

  it('caps the Retry-After hint with maxRetryAfterMs', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'cap',
      { consecutiveFailures: 1, openDurationMs: 1_000, maxRetryAfterMs: 60_000, overload: false },
      { clock },
    );
    await failWith(breaker, httpError(503, { 'retry-after': '86400' }));
    expect(breaker.snapshot().openUntil).toBe(clock.now() + 60_000);
    const rejection = await breaker.execute(() => 1).catch((e: unknown) => e);
    expect(rejection).toMatchObject({ reason: 'open', retryAfterMs: 60_000 });
  });

  it('reports the open duration the next reopen would use', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'next',
      { consecutiveFailures: 1, openDurationMs: 1_000, backoff: { multiplier: 3 } },
      { clock, random: sequence(0.5) },
    );
    expect(breaker.snapshot().thresholds.nextOpenDurationMs).toBe(1_000);
    await failWith(breaker);
    expect(breaker.snapshot().thresholds.nextOpenDurationMs).toBe(3_000);
  });

  it('a success that completes the window never sets the open duration from its own Retry-After', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'hinted-success',
      {
        window: { type: 'count', size: 2 },
        minimumThroughput: 2,
        failureRateThreshold: 0.5,
        openDurationMs: 1_000,
      },
      { clock },
    );
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    await breaker.execute(() => ({ retryAfterMs: 250_000 }));
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: clock.now() + 1_000 });
  });
});
