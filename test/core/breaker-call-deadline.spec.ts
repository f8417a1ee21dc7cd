import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, CallTimeoutError } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A call that never settles by itself; its signal, once read. */
function hanging(): {
  fn: (c: { signal: AbortSignal | undefined }) => Promise<never>;
  signal: () => AbortSignal | undefined;
} {
  let seen: AbortSignal | undefined;
  return {
    fn: ({ signal }) => {
      seen = signal;
      return new Promise<never>(() => {});
    },
    signal: () => seen,
  };
}

describe('a deadline of one call: execute(fn, { timeoutMs }) and acquire({ timeoutMs })', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a longer timeoutMs replaces the breaker's deadline for that call only", async () => {
    const breaker = new Breaker('reports', { timeoutMs: 200 }, { clock: new ManualClock() });
    const long = hanging();
    const call = breaker.execute(long.fn, { timeoutMs: 5_000 });
    const outcome = expect(call).rejects.toMatchObject({
      name: 'CallTimeoutError',
      timeoutMs: 5_000,
    });
    const other = expect(breaker.execute(hanging().fn)).rejects.toMatchObject({ timeoutMs: 200 });
    vi.advanceTimersByTime(200);
    await other;
    expect(long.signal()?.aborted).toBe(false);
    vi.advanceTimersByTime(4_799);
    expect(long.signal()?.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    await outcome;
    expect(long.signal()?.reason).toEqual(new CallTimeoutError('reports', 5_000));
    expect(breaker.snapshot().totals).toMatchObject({ timeouts: 2, failures: { timeout: 2 } });
  });

  it('a shorter one too, and a number gives a deadline to a call of a breaker without one', async () => {
    const breaker = new Breaker('quick', { timeoutMs: false }, { clock: new ManualClock() });
    const call = breaker.execute(hanging().fn, { timeoutMs: 50 });
    const outcome = expect(call).rejects.toMatchObject({ timeoutMs: 50 });
    vi.advanceTimersByTime(50);
    await outcome;
    expect(breaker.snapshot().totals.timeouts).toBe(1);
  });

  it('acquire({ timeoutMs }): the permit carries the deadline, and watchDeadline() keeps it', () => {
    const breaker = new Breaker('permit', { timeoutMs: 200 }, { clock: new ManualClock() });
    const permit = breaker.acquire({ timeoutMs: 1_000 });
    expect(permit.timeoutMs).toBe(1_000);
    const expired: unknown[] = [];
    permit.watchDeadline((error) => expired.push(error));
    vi.advanceTimersByTime(999);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual([new CallTimeoutError('permit', 1_000)]);
    expect(permit.outcome).toBe('timeout');
    expect(breaker.acquire().timeoutMs).toBe(200);
  });

  it('false means no deadline, only on a breaker built without one', async () => {
    const none = new Breaker('none', { timeoutMs: false });
    expect(none.acquire({ timeoutMs: false }).timeoutMs).toBeUndefined();
    await expect(none.execute(() => 'ok', { timeoutMs: false })).resolves.toBe('ok');
    const own = new Breaker('own', { timeoutMs: 200 });
    const removed =
      'Circuit breaker "own": execute() option "timeoutMs" is false, but the breaker has a deadline of 200 ms, which one call may change but not remove. Pass a longer deadline for this call, or build the breaker with timeoutMs: false.';
    expect(() => own.execute(() => 'ok', { timeoutMs: false })).toThrow(new TypeError(removed));
    expect(() => own.acquire({ timeoutMs: false })).toThrow(
      new TypeError(removed.replace('execute()', 'acquire()')),
    );
    // Checked before admission: nothing was admitted.
    expect(own.snapshot().totals.admitted).toBe(0);
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2_147_483_648, '100', true])(
    'refuses timeoutMs %s, naming the breaker and the option',
    (value) => {
      const breaker = new Breaker('checked');
      expect(() => breaker.execute(() => 'ok', { timeoutMs: value as number })).toThrow(
        /^Circuit breaker "checked": execute\(\) option "timeoutMs" must be a positive number of milliseconds up to 2147483647, or false on a breaker built with timeoutMs: false; got /,
      );
      expect(() => breaker.acquire({ timeoutMs: value as number })).toThrow(
        /^Circuit breaker "checked": acquire\(\) option "timeoutMs" must be/,
      );
      expect(breaker.snapshot().totals.admitted).toBe(0);
    },
  );

  it("a probe keeps the shorter of the call's deadline and its own", async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'probing',
      {
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        timeoutMs: 200,
        halfOpen: { maxProbes: 3, maxConcurrent: 3, probeTimeoutMs: 300 },
      },
      { clock },
    );
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    clock.advance(1_000);
    expect(breaker.state).toBe('half-open');
    expect(breaker.acquire({ timeoutMs: 100 }).timeoutMs).toBe(100);
    expect(breaker.acquire({ timeoutMs: 5_000 }).timeoutMs).toBe(300);
    expect(breaker.acquire().timeoutMs).toBe(300);
  });
});
