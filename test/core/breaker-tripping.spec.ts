import { describe, expect, it } from 'vitest';
import { Breaker, CallRejectedError } from '../../lib/core/index.js';
import { fail, succeed } from '../helpers/calls.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';

async function run(
  breaker: Breaker,
  fn: () => Promise<unknown>,
): Promise<'ok' | 'failed' | 'rejected'> {
  try {
    await breaker.execute(fn);
    return 'ok';
  } catch (error) {
    return error instanceof CallRejectedError ? 'rejected' : 'failed';
  }
}

describe('Breaker tripping (closed → open)', () => {
  it('opens on a failure rate at or above the threshold once minimumThroughput calls are in the window', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'rate',
      { window: { type: 'count', size: 10 }, failureRateThreshold: 0.5, minimumThroughput: 4 },
      { clock },
    );

    expect(await run(breaker, fail())).toBe('failed');
    expect(await run(breaker, fail())).toBe('failed');
    expect(await run(breaker, fail())).toBe('failed');
    // Three failures out of three is 100%, but below the minimum population.
    expect(breaker.state).toBe('closed');
    expect(await run(breaker, succeed(1))).toBe('ok');
    // 3 failures / 4 calls = 0.75 >= 0.5 → open, even though the last call succeeded.
    expect(breaker.state).toBe('open');
    expect(await run(breaker, succeed(1))).toBe('rejected');
  });

  it('opens at exactly a threshold that floating point cannot multiply exactly (55 of 100 at 0.55)', async () => {
    // 0.55 * 100 is 55.00000000000001: a multiplied comparison would miss this boundary.
    const breaker = new Breaker('float', {
      window: { type: 'count', size: 100 },
      failureRateThreshold: 0.55,
      minimumThroughput: 100,
    });
    for (let i = 0; i < 100; i++) await run(breaker, i < 45 ? succeed(1) : fail());
    expect(breaker.state).toBe('open');
  });

  it('opens at exactly the threshold and not below it', async () => {
    const at = new Breaker('at', {
      window: { type: 'count', size: 4 },
      failureRateThreshold: 0.5,
      minimumThroughput: 4,
    });
    for (const fn of [succeed(1), succeed(1), fail(), fail()]) await run(at, fn);
    expect(at.state).toBe('open');

    const below = new Breaker('below', {
      window: { type: 'count', size: 4 },
      failureRateThreshold: 0.5,
      minimumThroughput: 4,
    });
    for (const fn of [succeed(1), succeed(1), succeed(1), fail()]) await run(below, fn);
    expect(below.state).toBe('closed');
    expect(below.snapshot().window).toMatchObject({ calls: 4, failures: 1, failureRate: 0.25 });
  });

  it('judges only the last N outcomes of a count window', async () => {
    const breaker = new Breaker('ring', {
      window: { type: 'count', size: 4 },
      failureRateThreshold: 0.75,
      minimumThroughput: 4,
    });
    // f f s s | s f f: the oldest failures roll out before the newest arrive.
    for (const fn of [fail(), fail(), succeed(1), succeed(1), succeed(1), fail()])
      await run(breaker, fn);
    expect(breaker.snapshot().window).toMatchObject({ calls: 4, failures: 1 });
    expect(breaker.state).toBe('closed');
    await run(breaker, fail());
    expect(breaker.state).toBe('closed');
    await run(breaker, fail());
    // The last four are now s f f f: 3 / 4 = 0.75.
    expect(breaker.state).toBe('open');
    // Opening starts a fresh window: the evidence that opened it is not reused after recovery.
    expect(breaker.snapshot().window).toMatchObject({ calls: 0, failures: 0 });
  });

  it('with a time window, forgets outcomes older than the window, bucket by bucket', async () => {
    const clock = new ManualClock(0);
    const breaker = new Breaker(
      'time',
      {
        window: { type: 'time', durationMs: 10_000, buckets: 10 },
        failureRateThreshold: 0.5,
        minimumThroughput: 4,
      },
      { clock },
    );
    await run(breaker, fail());
    await run(breaker, fail());
    await run(breaker, fail());
    clock.advance(9_999);
    expect(breaker.snapshot().window).toMatchObject({ calls: 3, failures: 3 });
    clock.advance(1);
    // The bucket [0, 1000) has rotated out.
    expect(breaker.snapshot().window).toMatchObject({ calls: 0, failures: 0 });
    await run(breaker, fail());
    expect(breaker.state).toBe('closed');
  });

  it('with a time window, empties every bucket after an idle gap longer than the window', async () => {
    const clock = new ManualClock(0);
    const breaker = new Breaker(
      'idle',
      {
        window: { type: 'time', durationMs: 1_000, buckets: 4 },
        failureRateThreshold: 0.5,
        minimumThroughput: 2,
      },
      { clock },
    );
    await run(breaker, succeed(1));
    clock.advance(250);
    await run(breaker, succeed(1));
    clock.advance(250);
    await run(breaker, fail());
    expect(breaker.snapshot().window).toMatchObject({ calls: 3, failures: 1 });
    clock.advance(3_600_000);
    expect(breaker.snapshot().window).toMatchObject({ calls: 0, failures: 0 });
    await run(breaker, fail());
    await run(breaker, fail());
    expect(breaker.state).toBe('open');
  });

  it('consecutiveFailures alone is the classic model: a success resets the streak', async () => {
    const breaker = new Breaker('classic', { consecutiveFailures: 3 });
    await run(breaker, fail());
    await run(breaker, fail());
    await run(breaker, succeed(1));
    await run(breaker, fail());
    await run(breaker, fail());
    expect(breaker.state).toBe('closed');
    await run(breaker, fail());
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().thresholds).toMatchObject({
      consecutiveFailures: 3,
      failureRateThreshold: undefined,
    });
  });

  it('consecutiveFailures alone ignores the failure rate', async () => {
    const breaker = new Breaker('classic-only', { consecutiveFailures: 5 });
    // 30 calls alternating: 50% failure rate over > 20 calls, but never 5 in a row.
    for (let i = 0; i < 30; i++) await run(breaker, i % 2 ? fail() : succeed(1));
    expect(breaker.snapshot().window.failureRate).toBe(0.5);
    expect(breaker.state).toBe('closed');
  });

  it('consecutiveFailures beside a rate rule: whichever trips first opens', async () => {
    const streak = new Breaker('streak-first', { consecutiveFailures: 2, minimumThroughput: 10 });
    await run(streak, fail());
    await run(streak, fail());
    expect(streak.state).toBe('open');

    const rate = new Breaker('rate-first', {
      consecutiveFailures: 10,
      window: { type: 'count', size: 4 },
      minimumThroughput: 4,
    });
    for (const fn of [fail(), succeed(1), fail(), succeed(1)]) await run(rate, fn);
    expect(rate.state).toBe('open');
  });

  it('by default, opens on 10 failures in a row, before the rate rule has its 20 calls', async () => {
    const breaker = new Breaker('defaults');
    for (let i = 0; i < 9; i++) await run(breaker, fail());
    expect(breaker.state).toBe('closed');
    await run(breaker, fail());
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({
      reason: 'consecutive-failures',
      consecutiveFailures: 10,
    });
  });

  it('by default, after a healthy window of 20 calls or more, 6 failures in a row open (a sudden streak)', async () => {
    const breaker = new Breaker('defaults-sudden');
    for (let i = 0; i < 20; i++) await run(breaker, succeed(1));
    for (let i = 0; i < 5; i++) await run(breaker, fail());
    expect(breaker.state).toBe('closed');
    await run(breaker, fail());
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({
      reason: 'consecutive-failures',
      consecutiveFailures: 6,
    });
  });

  it('by default, after a clean window, 4 refused connections or timeouts in a row open (unreachable)', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const timedOut = new DOMException('client timeout', 'TimeoutError');
    const breaker = new Breaker('defaults-unreachable');
    for (let i = 0; i < 20; i++) await run(breaker, succeed(1));
    for (let i = 0; i < 3; i++) await run(breaker, fail(i === 1 ? timedOut : refused));
    expect(breaker.state).toBe('closed');
    await run(breaker, fail(refused));
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({
      reason: 'consecutive-failures',
      consecutiveFailures: 4,
    });
  });

  it('by default, a streak with an answer in it (a 5xx) needs the sudden streak of 6, not 4', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const breaker = new Breaker('defaults-answered');
    for (let i = 0; i < 20; i++) await run(breaker, succeed(1));
    // A 503 first, then refused connections: the streak is not all unreachable.
    await run(breaker, fail(httpError(503)));
    for (let i = 0; i < 4; i++) await run(breaker, fail(refused));
    expect(breaker.state).toBe('closed');
    await run(breaker, fail(refused));
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({ consecutiveFailures: 6 });
  });

  it('by default, the 50% rate rule still opens on failures that never reach 10 in a row', async () => {
    const breaker = new Breaker('defaults-rate');
    // 9 failures, a success, 9 failures, a success: 90% over 20 calls, never 10 in a row.
    for (let i = 0; i < 19; i++) await run(breaker, i === 9 ? succeed(1) : fail());
    expect(breaker.state).toBe('closed');
    await run(breaker, succeed(1));
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({ reason: 'failure-rate' });
  });

  it('consecutiveFailures: false leaves the rate rule alone: 19 failures in a row do not open', async () => {
    const breaker = new Breaker('rate-only', { consecutiveFailures: false });
    for (let i = 0; i < 19; i++) await run(breaker, fail());
    expect(breaker.state).toBe('closed');
    await run(breaker, fail());
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({ reason: 'failure-rate' });
  });

  it('opens on the slow-call rate, counting slow successes and slow failures alike', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'slow',
      {
        window: { type: 'count', size: 4 },
        minimumThroughput: 4,
        slowCallDurationMs: 100,
        slowCallRateThreshold: 0.75,
        failureRateThreshold: 1,
      },
      { clock },
    );
    const slowly = (outcome: 'ok' | 'fail') => () => {
      clock.advance(100);
      return outcome === 'ok' ? Promise.resolve(1) : Promise.reject(new Error('x'));
    };
    await run(breaker, slowly('ok'));
    await run(breaker, slowly('fail'));
    await run(breaker, succeed(1));
    expect(breaker.snapshot().window).toMatchObject({ calls: 3, slowCalls: 2 });
    await run(breaker, slowly('ok'));
    expect(breaker.snapshot().totals.slowCalls).toBe(3);
    expect(breaker.state).toBe('open');
  });

  it('does not count client errors (400, 404) toward the failure rate', async () => {
    const breaker = new Breaker('client-errors', {
      window: { type: 'count', size: 4 },
      minimumThroughput: 4,
    });
    for (let i = 0; i < 10; i++)
      expect(await run(breaker, fail(httpError(i % 2 ? 400 : 404)))).toBe('failed');
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().totals).toMatchObject({ successes: 10, failures: { total: 0 } });
  });

  it('never trips while metrics-only, and keeps recording', async () => {
    const events: string[] = [];
    const breaker = new Breaker('metrics-only', { consecutiveFailures: 1 });
    breaker.on('failure', () => events.push('failure'));
    breaker.force('metrics-only', { reason: 'watch it' });
    for (let i = 0; i < 5; i++) expect(await run(breaker, fail())).toBe('failed');
    expect(breaker.state).toBe('metrics-only');
    expect(events).toHaveLength(5);
    expect(breaker.snapshot().window).toMatchObject({ calls: 5, failures: 5 });
  });

  it('the slow-call rule applies beside consecutiveFailures too', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'slow-and-streak',
      {
        consecutiveFailures: 5,
        slowCallDurationMs: 100,
        slowCallRateThreshold: 0.5,
        minimumThroughput: 4,
        window: { type: 'count', size: 4 },
      },
      { clock },
    );
    for (let i = 0; i < 4; i++) {
      await breaker.execute(() => {
        clock.advance(100);
        return 'slow but fine';
      });
    }
    expect(breaker.state).toBe('open');
  });
});
