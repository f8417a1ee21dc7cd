import { describe, expect, it } from 'vitest';
import { Breaker, CallRejectedError } from '../../lib/core/index.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { sequence } from '../helpers/random-sequence.js';

const call = (breaker: Breaker, error?: unknown) =>
  breaker
    .execute(() => (error === undefined ? Promise.resolve('ok') : Promise.reject(error)))
    .catch((e: unknown) => e);

describe('Breaker overload handling (429 / 503 + Retry-After)', () => {
  it('an overload does not count toward the failure rate', async () => {
    const breaker = new Breaker(
      'shedding',
      { window: { type: 'count', size: 10 }, minimumThroughput: 2 },
      { random: () => 0.999 },
    );
    for (let i = 0; i < 10; i++) await call(breaker, httpError(429));
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().window).toMatchObject({ calls: 0, failures: 0, overloads: 10 });
    expect(breaker.snapshot().totals).toMatchObject({ overloads: 10, failures: { total: 0 } });
  });

  it('a Retry-After on an overload pauses new calls for that long, and rejections say so', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('paused', {}, { clock, random: () => 0.999 });
    await call(breaker, httpError(429, { 'retry-after': '2' }));
    const rejection = (await call(breaker)) as CallRejectedError;
    expect(rejection).toBeInstanceOf(CallRejectedError);
    expect(rejection).toMatchObject({
      reason: 'retry-after',
      state: 'closed',
      retryAfterMs: 2_000,
    });
    expect(breaker.snapshot().pausedUntil).toBe(clock.now() + 2_000);
    clock.advance(1_500);
    expect(await call(breaker)).toMatchObject({ reason: 'retry-after', retryAfterMs: 500 });
    clock.advance(500);
    expect(await call(breaker)).toBe('ok');
  });

  it('the pause is capped by maxRetryAfterMs', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'capped',
      { maxRetryAfterMs: 10_000 },
      { clock, random: () => 0.999 },
    );
    await call(breaker, httpError(503, { 'retry-after': '3600' }));
    expect(await call(breaker)).toMatchObject({ reason: 'retry-after', retryAfterMs: 10_000 });
  });

  it('without a hint, sheds calls with SRE client-side throttling: p = (requests - k·accepts) / (requests + 1)', async () => {
    // The random source decides each shedding draw: below p sheds, at or above admits.
    let draw = 0.999;
    const breaker = new Breaker(
      'throttled',
      { window: { type: 'count', size: 100 } },
      { random: () => draw },
    );
    // 6 accepted calls and 14 overloads: requests 20, accepts 6, p = (20 - 12) / 21 = 0.38095...
    for (let i = 0; i < 6; i++) await call(breaker);
    for (let i = 0; i < 14; i++) await call(breaker, httpError(429));
    draw = 0.38;
    expect(await call(breaker)).toMatchObject({
      reason: 'throttled',
      state: 'closed',
      retryAfterMs: 1_000,
    });
    // A shed call was not made: it is no evidence of overload, and p stays 0.38095...
    draw = 0.3809;
    expect(await call(breaker)).toMatchObject({ reason: 'throttled' });
    draw = 0.381;
    expect(await call(breaker)).toBe('ok');
    expect(breaker.snapshot().window).toMatchObject({ calls: 7, overloads: 14, shed: 2 });
    expect(breaker.snapshot().totals.rejected).toMatchObject({ throttled: 2, total: 2 });
  });

  it('does not shed below minimumThroughput requests: one 429 must not shed half the traffic', async () => {
    const breaker = new Breaker('few', { minimumThroughput: 5 }, { random: () => 0 });
    for (let i = 0; i < 4; i++) await call(breaker, httpError(429));
    // p would be (4 - 0) / 5 = 0.8, but 4 requests are below the minimum.
    expect(await call(breaker)).toBe('ok');
    await call(breaker, httpError(429));
    // 6 requests, 1 accept: p = (6 - 2) / 7 > 0 and random() = 0 sheds.
    expect(await call(breaker)).toMatchObject({ reason: 'throttled' });
  });

  it('does not shed while accepts keep up with k: p ≤ 0', async () => {
    const breaker = new Breaker('healthy-enough', {}, { random: () => 0 });
    // 10 accepts, 10 overloads: 20 - 2·10 = 0.
    for (let i = 0; i < 10; i++) await call(breaker);
    for (let i = 0; i < 10; i++) await call(breaker, httpError(429));
    expect(await call(breaker)).toBe('ok');
  });

  it('an overload on a half-open probe counts as a failed probe, and its Retry-After lengthens the open period', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'probe-overload',
      { consecutiveFailures: 1, openDurationMs: 1_000 },
      { clock },
    );
    await call(breaker, httpError(500));
    clock.advance(1_000);
    await call(breaker, httpError(429, { 'retry-after': '7' }));
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: clock.now() + 7_000 });
  });

  it('overload: false counts 429 as a failure', async () => {
    const breaker = new Breaker('strict', { consecutiveFailures: 2, overload: false });
    await call(breaker, httpError(429));
    await call(breaker, httpError(429));
    expect(breaker.state).toBe('open');
  });

  it('is reset by reset()', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('reset-pause', {}, { clock, random: sequence(0.999) });
    await call(breaker, httpError(429, { 'retry-after': '60' }));
    breaker.reset();
    expect(await call(breaker)).toBe('ok');
  });

  it('overload evidence ages with time, with a count window too: an hour later nothing is shed', async () => {
    const clock = new ManualClock();
    let draw = 0;
    const breaker = new Breaker(
      'decays',
      { window: { type: 'count', size: 100 } },
      { clock, random: () => draw },
    );
    for (let i = 0; i < 30; i++) await call(breaker, httpError(429));
    expect(await call(breaker)).toMatchObject({ reason: 'throttled' });
    clock.advance(60_000);
    // Whatever the draw: the 30 refusals have left the throttle's 60 s window.
    draw = 0;
    expect(await call(breaker)).toBe('ok');
    expect(await call(breaker)).toBe('ok');
    expect(breaker.snapshot().window).toMatchObject({ shed: 0 });
  });

  it('shedding does not feed itself: a healthy dependency behind a throttle is found again by the calls let through', async () => {
    let draw = 0.999;
    const breaker = new Breaker(
      'recovers',
      { window: { type: 'count', size: 100 } },
      { random: () => draw },
    );
    for (let i = 0; i < 30; i++) await call(breaker, httpError(429));
    // p = 30 / 31 = 0.967...: with draws of 0.5 every call is shed, and shed calls do not raise it.
    draw = 0.5;
    for (let i = 0; i < 200; i++)
      expect(await call(breaker)).toMatchObject({ reason: 'throttled' });
    draw = 0.97;
    expect(await call(breaker)).toBe('ok');
    // One accepted call: p = (31 - 2) / 32 = 0.906..., and each success lowers it further.
    draw = 0.91;
    expect(await call(breaker)).toBe('ok');
    draw = 0.85;
    expect(await call(breaker)).toBe('ok');
    expect(breaker.snapshot().window).toMatchObject({ calls: 3, overloads: 30, shed: 200 });
  });

  describe('throttling counts a request when it settles, with its answer (Google SRE counts it when sent)', () => {
    /** `n` calls sent now that settle when the test says, each as it says. */
    function inFlight(breaker: Breaker, n: number) {
      const settles: ((error: unknown) => void)[] = [];
      const outcomes = Array.from({ length: n }, () =>
        breaker
          .execute(
            () =>
              new Promise<string>((resolve, reject) =>
                settles.push((error) => (error === undefined ? resolve('ok') : reject(error))),
              ),
          )
          .catch((e: unknown) => e),
      );
      return {
        settle: async (error?: unknown) => {
          for (const settle of settles) settle(error);
          return Promise.all(outcomes);
        },
      };
    }
    const options = {
      window: { type: 'time' as const, durationMs: 10_000 },
      minimumThroughput: 5,
      timeoutMs: false as const,
    };

    it('429s of calls that outlast the window still throttle: each request is counted with its answer, never after it has left', async () => {
      const clock = new ManualClock();
      let draw = 0.999;
      const breaker = new Breaker('slow-429', options, { clock, random: () => draw });
      for (let i = 0; i < 20; i++) expect(await call(breaker)).toBe('ok');
      const slow = inFlight(breaker, 20);
      // The answers come 15 s after the calls were sent, past the 10 s window: counted at send,
      // the requests would have left the window before their 429s came, and nothing would be shed.
      clock.advance(15_000);
      await slow.settle(httpError(429));
      expect(breaker.snapshot().window).toMatchObject({ calls: 0, overloads: 20 });
      // p = (requests - 2 x accepts) / (requests + 1) = 20 / 21 = 0.952...: a draw just below sheds, just above admits.
      draw = 0.952;
      expect(await call(breaker)).toMatchObject({ reason: 'throttled' });
      draw = 0.953;
      expect(await call(breaker)).toBe('ok');
      // Once the 429s leave the throttle's window, no draw sheds.
      clock.advance(10_000);
      draw = 0;
      expect(await call(breaker)).toBe('ok');
      expect(breaker.snapshot().window.shed).toBe(0);
    });

    it('calls still in flight are not taken for refusals: a slow but healthy dependency is not shed after one 429', async () => {
      const clock = new ManualClock();
      const breaker = new Breaker('slow-ok', options, { clock, random: () => 0 });
      for (let i = 0; i < 20; i++) expect(await call(breaker)).toBe('ok');
      expect(await call(breaker, httpError(429))).toBeInstanceOf(Error);
      // A throttle now holds 21 requests and 20 accepts: p = 0.
      // Counted when sent, these 100 slow calls would make p = (121 - 40) / 122 = 0.66 before any answer.
      const slow = inFlight(breaker, 100);
      clock.advance(8_000);
      expect(await call(breaker)).toBe('ok');
      expect(await slow.settle()).toEqual(Array.from({ length: 100 }, () => 'ok'));
      expect(breaker.snapshot().totals.rejected.throttled).toBe(0);
      expect(breaker.snapshot().window).toMatchObject({ calls: 121, overloads: 1, shed: 0 });
    });
  });
});
