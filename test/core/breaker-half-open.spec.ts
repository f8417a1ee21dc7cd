import { describe, expect, it } from 'vitest';
import { Breaker, CallTimeoutError, CallRejectedError } from '../../lib/core/index.js';
import { fail, succeed } from '../helpers/calls.js';
import { deferred } from '../helpers/deferred.js';
import { flush } from '../helpers/flush.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A breaker that one failure opens for 1 s. */
function tripped(
  options: ConstructorParameters<typeof Breaker>[1] = {},
  clock = new ManualClock(),
) {
  const breaker = new Breaker(
    'probe',
    { consecutiveFailures: 1, openDurationMs: 1_000, ...options },
    { clock },
  );
  return { breaker, clock, open: () => breaker.execute(fail()).catch(() => undefined) };
}

describe('Breaker half-open probing', () => {
  it('stays open for the open duration, then moves to half-open lazily on the next read', async () => {
    const { breaker, clock, open } = tripped();
    await open();
    const openedAt = clock.now();
    expect(breaker.snapshot()).toMatchObject({
      state: 'open',
      since: openedAt,
      openUntil: openedAt + 1_000,
    });
    clock.advance(999);
    await expect(breaker.execute(succeed(1))).rejects.toMatchObject({
      reason: 'open',
      retryAfterMs: 1,
    });
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
    expect(breaker.snapshot().since).toBe(openedAt + 1_000);
  });

  it('closes after one successful probe by default, with a fresh window', async () => {
    const { breaker, clock, open } = tripped();
    await open();
    clock.advance(1_000);
    await expect(breaker.execute(succeed('probe'))).resolves.toBe('probe');
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().totals.probes).toEqual({
      admitted: 1,
      succeeded: 1,
      failed: 0,
      released: 0,
      abandoned: 0,
    });
  });

  it('reopens on a failed probe and restarts the open duration', async () => {
    const { breaker, clock, open } = tripped();
    await open();
    clock.advance(1_000);
    await expect(breaker.execute(fail())).rejects.toThrow('boom');
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: clock.now() + 1_000 });
  });

  it('admits at most maxConcurrent probes at once and rejects the rest immediately', async () => {
    const { breaker, clock, open } = tripped({ halfOpen: { maxProbes: 3, maxConcurrent: 2 } });
    await open();
    clock.advance(1_000);
    const a = deferred<number>();
    const b = deferred<number>();
    const first = breaker.execute(() => a.promise);
    const second = breaker.execute(() => b.promise);
    await expect(breaker.execute(succeed(3))).rejects.toMatchObject({
      reason: 'half-open-busy',
      state: 'half-open',
    });
    a.resolve(1);
    await first;
    // One slot freed, one probe of the budget left.
    const c = deferred<number>();
    const third = breaker.execute(() => c.promise);
    await expect(breaker.execute(succeed(4))).rejects.toMatchObject({ reason: 'half-open-busy' });
    b.resolve(2);
    c.resolve(3);
    await Promise.all([second, third]);
    expect(breaker.state).toBe('closed');
  });

  it('closes after successesToClose successes and reopens once that can no longer happen', async () => {
    const closes = tripped({ halfOpen: { maxProbes: 3, maxConcurrent: 1, successesToClose: 2 } });
    await closes.open();
    closes.clock.advance(1_000);
    await closes.breaker.execute(fail()).catch(() => undefined);
    expect(closes.breaker.state).toBe('half-open'); // 2 successes still possible out of 2 remaining probes
    await closes.breaker.execute(succeed(1));
    expect(closes.breaker.state).toBe('half-open');
    await closes.breaker.execute(succeed(1));
    expect(closes.breaker.state).toBe('closed');

    const reopens = tripped({ halfOpen: { maxProbes: 3, maxConcurrent: 1, successesToClose: 2 } });
    await reopens.open();
    reopens.clock.advance(1_000);
    await reopens.breaker.execute(succeed(1));
    await reopens.breaker.execute(fail()).catch(() => undefined);
    expect(reopens.breaker.state).toBe('half-open');
    await reopens.breaker.execute(fail()).catch(() => undefined);
    expect(reopens.breaker.state).toBe('open');
  });

  it('a probe whose outcome is ignored returns its permit to the budget', async () => {
    const { breaker, clock, open } = tripped();
    await open();
    clock.advance(1_000);
    const controller = new AbortController();
    const hanging = breaker.execute(() => new Promise(() => undefined), {
      signal: controller.signal,
    });
    await expect(breaker.execute(succeed(1))).rejects.toMatchObject({ reason: 'half-open-busy' });
    controller.abort(new Error('caller gave up'));
    await expect(hanging).rejects.toThrow('caller gave up');
    expect(breaker.snapshot().totals.probes).toMatchObject({ admitted: 1, released: 1 });
    await expect(breaker.execute(succeed(2))).resolves.toBe(2);
    expect(breaker.state).toBe('closed');
  });

  it('a hung probe counts as failed after halfOpen.maxWaitMs, rejecting its caller, so it cannot wedge the breaker', async () => {
    const { breaker, clock, open } = tripped({ halfOpen: { maxWaitMs: 5_000 } });
    await open();
    clock.advance(1_000);
    let signal: AbortSignal | undefined;
    const hung = breaker.execute(({ signal: s }) => {
      signal = s;
      return new Promise(() => undefined);
    });
    clock.advance(4_999);
    await expect(breaker.execute(succeed(1))).rejects.toMatchObject({
      reason: 'half-open-busy',
      retryAfterMs: 1,
    });
    clock.advance(1);
    expect(breaker.state).toBe('open');
    await expect(hung).rejects.toBeInstanceOf(CallTimeoutError);
    await expect(hung).rejects.toThrow('halfOpen.maxWaitMs (5000 ms)');
    expect(signal?.aborted).toBe(true);
    expect(breaker.snapshot().totals).toMatchObject({ timeouts: 1, probes: { failed: 1 } });
  });

  it('a probe admitted through acquire() and never settled also expires', () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'permit',
      { consecutiveFailures: 1, openDurationMs: 100, halfOpen: { maxWaitMs: 50 } },
      { clock },
    );
    breaker.acquire().fail(new Error('down'));
    clock.advance(100);
    const permit = breaker.acquire();
    expect(permit.probe).toBe(true);
    clock.advance(50);
    expect(breaker.state).toBe('open');
    // The late verdict belongs to an expired probe and changes nothing.
    permit.succeed(1);
    expect(breaker.state).toBe('open');
  });

  it('rejections carry the last failure as cause', async () => {
    const { breaker, open } = tripped();
    await open();
    const error = await breaker.execute(succeed(1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallRejectedError);
    expect((error as CallRejectedError).cause).toEqual(new Error('boom'));
  });

  it('outcomes of an earlier generation do not count: a slow call admitted while closed cannot close a half-open breaker', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'generations',
      { consecutiveFailures: 1, openDurationMs: 1_000 },
      { clock },
    );
    const slow = deferred<string>();
    const admittedWhileClosed = breaker.execute(() => slow.promise);
    await breaker.execute(fail()).catch(() => undefined);
    expect(breaker.state).toBe('open');
    clock.advance(1_000);
    expect(breaker.state).toBe('half-open');
    slow.resolve('late');
    await expect(admittedWhileClosed).resolves.toBe('late');
    expect(breaker.state).toBe('half-open');
    // And a stale failure cannot reopen a closed breaker.
    const stale = deferred<string>();
    const admittedWhileHalfOpen = breaker.execute(() => stale.promise);
    await flush();
    breaker.reset();
    stale.reject(new Error('late failure'));
    await admittedWhileHalfOpen.catch(() => undefined);
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().window.failures).toBe(0);
  });
});

describe('Breaker.acquire() permits', () => {
  it('track() applies the deadline and classification to a promise the caller started', async () => {
    const { vi } = await import('vitest');
    vi.useFakeTimers();
    try {
      const breaker = new Breaker('tracked', { timeoutMs: 100, consecutiveFailures: 1 });
      const permit = breaker.acquire<string>();
      expect(permit.timeoutMs).toBe(100);
      const tracked = permit.track(new Promise<string>(() => undefined));
      const outcome = expect(tracked).rejects.toMatchObject({
        code: 'CALL_TIMEOUT',
        timeoutMs: 100,
      });
      vi.advanceTimersByTime(100);
      await outcome;
      expect(permit.outcome).toBe('timeout');
      expect(breaker.state).toBe('open');
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('settles once: a second verdict is ignored and reports how the call was counted', async () => {
    const breaker = new Breaker('once', { consecutiveFailures: 2 });
    const permit = breaker.acquire();
    expect(permit.fail(new Error('x'))).toBe('failure');
    expect(permit.succeed(1)).toBe('failure');
    expect(permit.outcome).toBe('failure');
    await expect(permit.track(Promise.resolve(1))).rejects.toThrow(
      'Circuit breaker "once": this permit was already settled.',
    );
    expect(breaker.snapshot().totals).toMatchObject({
      admitted: 1,
      successes: 0,
      failures: { total: 1 },
    });
    const other = breaker.acquire();
    await expect(other.track(Promise.resolve(5))).resolves.toBe(5);
    expect(other.outcome).toBe('success');
  });

  it('release() counts the call as ignored and returns a probe permit', () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'released',
      { consecutiveFailures: 1, openDurationMs: 10 },
      { clock },
    );
    breaker.acquire().fail(new Error('x'));
    clock.advance(10);
    breaker.acquire().release();
    expect(breaker.snapshot().halfOpen).toMatchObject({ probesAdmitted: 0, probesInFlight: 0 });
    expect(() => breaker.acquire()).not.toThrow();
    expect(() => breaker.acquire()).toThrow(CallRejectedError);
    expect(() => breaker.acquire()).toThrow(
      'Circuit breaker "released" rejected the call: the circuit is half-open and its probe budget is taken.',
    );
  });
});
