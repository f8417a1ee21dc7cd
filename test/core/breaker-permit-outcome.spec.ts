import { describe, expect, it } from 'vitest';
import { Breaker, CallRejectedError } from '../../lib/core/index.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** An error that carries the pause the caller read from the answer itself (a gRPC status, say). */
const paused = (retryAfterMs: number) =>
  Object.assign(new Error('UNAVAILABLE'), { code: 14, retryAfterMs });

describe('CallPermit#fail(error, outcome): an outcome the caller decided', () => {
  it("'overload' counts an overload with the error's pause, with no HTTP status on the error", () => {
    const clock = new ManualClock();
    const breaker = new Breaker('decided', {}, { clock, random: () => 0.999 });
    expect(breaker.acquire().fail(paused(1_500), 'overload')).toBe('overload');
    expect(breaker.snapshot().totals).toMatchObject({ overloads: 1, failures: { total: 0 } });
    expect(breaker.snapshot().pausedUntil).toBe(clock.now() + 1_500);
    let rejection: unknown;
    try {
      breaker.acquire();
    } catch (error) {
      rejection = error;
    }
    expect(rejection).toBeInstanceOf(CallRejectedError);
    expect(rejection).toMatchObject({ reason: 'retry-after', retryAfterMs: 1_500 });
  });

  it('without an outcome, the same error is a failure (the default classification)', () => {
    const breaker = new Breaker('undecided', {}, { clock: new ManualClock() });
    expect(breaker.acquire().fail(paused(1_500))).toBe('failure');
    expect(breaker.snapshot().totals).toMatchObject({ overloads: 0, failures: { total: 1 } });
    expect(breaker.snapshot().pausedUntil).toBeUndefined();
  });

  it("'failure' replaces the default classification: a 429 counts as a failure", () => {
    const breaker = new Breaker('failed', {}, { clock: new ManualClock() });
    expect(breaker.acquire().fail(httpError(429), 'failure')).toBe('failure');
    expect(breaker.snapshot().totals).toMatchObject({ overloads: 0, failures: { total: 1 } });
  });

  it("the breaker's classify still decides first; undefined leaves the caller's outcome", () => {
    const answers: (string | undefined)[] = ['ignored', undefined];
    const breaker = new Breaker(
      'classified',
      { classify: () => answers.shift() as 'ignored' | undefined },
      { clock: new ManualClock(), random: () => 0.999 },
    );
    expect(breaker.acquire().fail(paused(10), 'overload')).toBe('ignored');
    expect(breaker.acquire().fail(paused(10), 'overload')).toBe('overload');
    expect(breaker.snapshot().totals).toMatchObject({ ignored: 1, overloads: 1 });
  });

  it("'overload' is a failure when the breaker's overload option is false", () => {
    const breaker = new Breaker('no-overload', { overload: false }, { clock: new ManualClock() });
    expect(breaker.acquire().fail(paused(1_500), 'overload')).toBe('failure');
    expect(breaker.snapshot().totals).toMatchObject({ overloads: 0, failures: { total: 1 } });
  });

  it('an outcome that is neither failure nor overload throws and leaves the permit unsettled', () => {
    const breaker = new Breaker('bad-outcome', {}, { clock: new ManualClock() });
    const permit = breaker.acquire();
    expect(() => permit.fail(new Error('x'), 'success' as 'failure')).toThrow(
      new TypeError(
        `Circuit breaker "bad-outcome": permit.fail(error, outcome) got outcome "success"; expected 'failure', 'overload' or undefined. The permit was not settled; pass one of those (succeed() for a success, release() to ignore the call).`,
      ),
    );
    expect(permit.outcome).toBeUndefined();
    expect(permit.succeed('ok')).toBe('success');
  });
});
