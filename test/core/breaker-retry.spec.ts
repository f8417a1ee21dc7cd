import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Breaker,
  BreakerConfigError,
  CallRejectedError,
  withRetry,
  type RetryEvent,
} from '../../lib/core/index.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';

const NO_JITTER = { initialMs: 100, multiplier: 2, maxMs: 1_000, jitter: 0 };

describe('withRetry()', () => {
  let clock: ManualClock;
  /** Moves the breaker's clock and the timers together. */
  const elapse = async (ms: number) => {
    clock.advance(ms);
    await vi.advanceTimersByTimeAsync(ms);
  };
  beforeEach(() => {
    vi.useFakeTimers();
    clock = new ManualClock();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function breakerWithEvents(options = {}) {
    const breaker = new Breaker('inventory', { timeoutMs: false, ...options }, { clock });
    const retries: RetryEvent[] = [];
    breaker.on('retry', (event) => retries.push(event));
    return { breaker, retries };
  }

  it('retries a failure until the attempts are spent, after a growing backoff, then gives the last error', async () => {
    const { breaker, retries } = breakerWithEvents();
    const policy = withRetry(breaker, { attempts: 3, backoff: NO_JITTER, budget: false });
    const errors = [new Error('one'), new Error('two'), new Error('three')];
    let made = 0;
    const call = policy.execute(() => Promise.reject(errors[made++]));
    const outcome = expect(call).rejects.toBe(errors[2]);
    await vi.advanceTimersByTimeAsync(0);
    expect(made).toBe(1);
    await elapse(99);
    expect(made).toBe(1);
    await elapse(1);
    expect(made).toBe(2);
    await elapse(199);
    expect(made).toBe(2);
    await elapse(1);
    await outcome;
    expect(made).toBe(3);
    expect(retries).toEqual([
      { attempt: 2, delayMs: 100, error: errors[0], result: 'scheduled' },
      { attempt: 3, delayMs: 200, error: errors[1], result: 'scheduled' },
    ]);
    expect(breaker.snapshot().totals).toMatchObject({
      admitted: 3,
      failures: { total: 3 },
      retries: { attempted: 2, denied: 0 },
    });
  });

  it('resolves as soon as an attempt succeeds', async () => {
    const { breaker } = breakerWithEvents();
    const policy = withRetry(breaker, { attempts: 5, backoff: NO_JITTER, budget: false });
    let made = 0;
    const call = policy.execute(() =>
      ++made < 3 ? Promise.reject(new Error('flaky')) : Promise.resolve(`ok after ${made}`),
    );
    await elapse(100);
    await elapse(200);
    expect(await call).toBe('ok after 3');
    expect(breaker.snapshot().totals.retries).toEqual({ attempted: 2, denied: 0 });
  });

  it('never retries a rejection by the breaker, even one that opened between attempts', async () => {
    const { breaker, retries } = breakerWithEvents({ consecutiveFailures: 1 });
    const policy = withRetry(breaker, { attempts: 5, backoff: NO_JITTER, budget: false });
    const fn = vi.fn(() => Promise.reject(new Error('down')));
    const call = policy.execute(fn);
    const outcome = expect(call).rejects.toMatchObject({ reason: 'open' });
    await elapse(100);
    await outcome;
    // The first failure opened the breaker; the retry it scheduled was rejected, and that is final.
    expect(fn).toHaveBeenCalledTimes(1);
    expect(retries).toHaveLength(1);

    breaker.isolate();
    const rejected = await policy.execute(fn).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(CallRejectedError);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(retries).toHaveLength(1);
  });

  it("waits the dependency's Retry-After exactly, and the breaker's own pause has ended by then", async () => {
    const { breaker, retries } = breakerWithEvents();
    const policy = withRetry(breaker, { attempts: 2, backoff: NO_JITTER, budget: false });
    const overloaded = httpError(503, { 'retry-after': '2' });
    let made = 0;
    const call = policy.execute(() =>
      made++ === 0 ? Promise.reject(overloaded) : Promise.resolve('served'),
    );
    // The failure is counted (and the breaker's pause begins) before any time passes.
    await vi.advanceTimersByTimeAsync(0);
    await elapse(1_999);
    expect(made).toBe(1);
    await elapse(1);
    expect(await call).toBe('served');
    expect(retries).toEqual([
      { attempt: 2, delayMs: 2_000, error: overloaded, result: 'scheduled' },
    ]);
  });

  it("waits until the breaker's own pause is over when the timer fires before the breaker's clock reads its end", async () => {
    const { breaker, retries } = breakerWithEvents();
    const policy = withRetry(breaker, { attempts: 2, backoff: NO_JITTER, budget: false });
    const overloaded = httpError(429, { 'retry-after': '2' });
    let made = 0;
    const call = policy.execute(() =>
      made++ === 0 ? Promise.reject(overloaded) : Promise.resolve('served'),
    );
    await vi.advanceTimersByTimeAsync(0);
    // The process's timer fires at 2,000 ms while the breaker's monotonic reading says 1,999 (it was read later, in whole ms).
    clock.advance(1_999);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(made).toBe(1);
    await elapse(1);
    expect(await call).toBe('served');
    expect(made).toBe(2);
    expect(retries).toEqual([
      { attempt: 2, delayMs: 2_000, error: overloaded, result: 'scheduled' },
    ]);
    expect(breaker.snapshot().totals.rejected.total).toBe(0);
  });

  it('never has a retry refused by its own pause, whatever the lag of the timers behind the clock (fast-check, fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(429, 503),
        async (seconds, lagMs, status) => {
          const { breaker } = breakerWithEvents();
          const policy = withRetry(breaker, { attempts: 2, backoff: NO_JITTER, budget: false });
          const overloaded = httpError(status, { 'retry-after': String(seconds) });
          let made = 0;
          const call = policy.execute(() =>
            made++ === 0 ? Promise.reject(overloaded) : Promise.resolve('served'),
          );
          await vi.advanceTimersByTimeAsync(0);
          clock.advance(seconds * 1_000 - lagMs);
          await vi.advanceTimersByTimeAsync(seconds * 1_000);
          for (let ms = 0; ms < lagMs; ms++) await elapse(1);
          expect(await call).toBe('served');
          expect(made).toBe(2);
          expect(breaker.snapshot().totals.rejected.total).toBe(0);
        },
      ),
      { seed: 2_2026, numRuns: 60 },
    );
  });

  it('still settles on a clock that stands still: the attempt is then refused by the pause', async () => {
    const { breaker } = breakerWithEvents();
    const policy = withRetry(breaker, { attempts: 2, backoff: NO_JITTER, budget: false });
    const fn = vi.fn(() => Promise.reject(httpError(429, { 'retry-after': '2' })));
    const call = policy.execute(fn);
    const outcome = expect(call).rejects.toMatchObject({
      reason: 'retry-after',
      retryAfterMs: 2_000,
    });
    await vi.advanceTimersByTimeAsync(2_000);
    await outcome;
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('gives up at once when the Retry-After is longer than maxRetryAfterMs', async () => {
    const { breaker, retries } = breakerWithEvents({ overload: false });
    const policy = withRetry(breaker, { attempts: 3, budget: false, maxRetryAfterMs: 1_000 });
    const error = httpError(503, { 'retry-after': '60' });
    const fn = vi.fn(() => Promise.reject(error));
    await expect(policy.execute(fn)).rejects.toBe(error);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(retries).toEqual([]);
  });

  /** Call B is in flight while call A gets a 429 pausing the breaker for `seconds`; then B fails with a 500. */
  async function failDuringAnothersPause(maxRetryAfterMs: number, seconds: string) {
    const { breaker, retries } = breakerWithEvents();
    const policy = withRetry(breaker, {
      attempts: 2,
      maxRetryAfterMs,
      backoff: { initialMs: 10, jitter: 0 },
      budget: false,
    });
    const serverError = httpError(500);
    let failB!: (error: unknown) => void;
    let made = 0;
    const callB = policy.execute(() =>
      made++ === 0
        ? new Promise<string>((_, reject) => (failB = reject))
        : Promise.resolve('served'),
    );
    const outcomeB = callB.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await breaker
      .execute(() => Promise.reject(httpError(429, { 'retry-after': seconds })))
      .catch(() => undefined);
    failB(serverError);
    await vi.advanceTimersByTimeAsync(0);
    return { retries, outcomeB, serverError, made: () => made };
  }

  it("stops retrying when another call's pause of the breaker is longer than maxRetryAfterMs", async () => {
    const { retries, outcomeB, serverError, made } = await failDuringAnothersPause(300, '2');
    expect(await outcomeB).toEqual({ error: serverError });
    expect(made()).toBe(1);
    expect(retries).toEqual([]);
  });

  it("waits out another call's shorter pause, and the retry event says so", async () => {
    const { retries, outcomeB, serverError, made } = await failDuringAnothersPause(5_000, '2');
    expect(retries).toEqual([
      { attempt: 2, delayMs: 2_000, error: serverError, result: 'scheduled' },
    ]);
    await elapse(1_999);
    expect(made()).toBe(1);
    await elapse(1);
    expect(await outcomeB).toEqual({ value: 'served' });
    expect(made()).toBe(2);
  });

  it('retries only what the classification calls a failure or an overload', async () => {
    const { breaker, retries } = breakerWithEvents({
      classify: (error: unknown) =>
        (error as Error).message === 'business' ? 'ignored' : undefined,
    });
    const policy = withRetry(breaker, { attempts: 3, backoff: NO_JITTER, budget: false });
    for (const error of [httpError(400), httpError(404), new Error('business')]) {
      const fn = vi.fn(() => Promise.reject(error));
      await expect(policy.execute(fn)).rejects.toBe(error);
      expect(fn).toHaveBeenCalledTimes(1);
    }
    // The caller's own abort is never retried either.
    const controller = new AbortController();
    const aborted = policy.execute(
      () =>
        new Promise((_, reject) => {
          controller.signal.addEventListener('abort', () => reject(controller.signal.reason));
        }),
      { signal: controller.signal },
    );
    controller.abort(new Error('caller left'));
    await expect(aborted).rejects.toThrow('caller left');
    expect(retries).toEqual([]);
  });

  it('judges an attempt by the options it was admitted under, whatever reconfigure() puts in force meanwhile', async () => {
    const { breaker, retries } = breakerWithEvents();
    const policy = withRetry(breaker, { attempts: 2, backoff: NO_JITTER, budget: false });
    const failure = new Error('upstream down');
    const attempts: ((error: unknown) => void)[] = [];
    const fn = vi.fn(() => new Promise<string>((_, reject) => attempts.push(reject)));
    const call = policy.execute(fn);
    // Admitted while an Error is a failure; reconfigured to ignore it before the attempt fails.
    breaker.reconfigure({ timeoutMs: false, classify: () => 'ignored' });
    attempts[0]!(failure);
    await vi.advanceTimersByTimeAsync(0);
    expect(breaker.snapshot().totals.failures.total).toBe(1);
    expect(retries.map((event) => [event.attempt, event.delayMs, event.result])).toEqual([
      [2, 100, 'scheduled'],
    ]);
    await elapse(100);
    expect(fn).toHaveBeenCalledTimes(2);
    // The retry was admitted under the new options: its failure is ignored, and not retried.
    attempts[1]!(failure);
    await expect(call).rejects.toBe(failure);
    expect(breaker.snapshot().totals.failures.total).toBe(1);
    // A value too: admitted while a 502 counts as failed, settled under options that call it a success.
    const values: ((value: unknown) => void)[] = [];
    const valued = policy.execute(() => new Promise((resolve) => values.push(resolve)));
    breaker.reconfigure({ timeoutMs: false, classifyResult: () => 'success' });
    values[0]!({ status: 502, headers: {} });
    await vi.advanceTimersByTimeAsync(0);
    expect(retries).toHaveLength(2);
    await elapse(100);
    values[1]!('fine');
    expect(await valued).toBe('fine');
  });

  it('retries a resolved value the breaker counts as failed, and returns the last one when attempts run out', async () => {
    const { breaker } = breakerWithEvents();
    const policy = withRetry(breaker, { attempts: 2, backoff: NO_JITTER, budget: false });
    const response = { status: 502, headers: {} };
    const fn = vi.fn(() => Promise.resolve(response));
    const call = policy.execute(fn);
    await elapse(100);
    expect(await call).toBe(response);
    expect(fn).toHaveBeenCalledTimes(2);
    // A plain value is a success: no retry.
    expect(await policy.execute(() => 'plain')).toBe('plain');
  });

  it('draws from a budget per breaker shared by every policy: past it, the failure reaches the caller at once', async () => {
    const { breaker, retries } = breakerWithEvents();
    // 10 % of calls plus 0.1 a second: over the 10 s window, one retry without any calls.
    const budget = { ratio: 0.1, minPerSecond: 0.1 };
    const first = withRetry(breaker, { attempts: 2, backoff: NO_JITTER, budget });
    const second = withRetry(breaker, { attempts: 2, backoff: NO_JITTER, budget });
    const error = new Error('down');
    const failing = vi.fn(() => Promise.reject(error));

    const granted = expect(first.execute(failing)).rejects.toBe(error);
    const denied = expect(second.execute(failing)).rejects.toBe(error);
    await vi.advanceTimersByTimeAsync(0);
    await denied;
    await elapse(100);
    await granted;
    expect(failing).toHaveBeenCalledTimes(3);
    expect(retries.map((event) => event.result)).toEqual(['scheduled', 'budget-exhausted']);
    expect(breaker.snapshot().totals.retries).toEqual({ attempted: 1, denied: 1 });

    // Ten more calls earn one more retry (10 %)...
    for (let i = 0; i < 10; i++) await first.execute(() => 'fine');
    const earned = expect(first.execute(failing)).rejects.toBe(error);
    await elapse(100);
    await earned;
    expect(retries.at(-1)!.result).toBe('scheduled');
    // ...and the window forgets: 10 s later the floor is there again, the old retries gone.
    await elapse(10_000);
    const later = expect(first.execute(failing)).rejects.toBe(error);
    await elapse(100);
    await later;
    expect(retries.map((event) => event.result)).toEqual([
      'scheduled',
      'budget-exhausted',
      'scheduled',
      'scheduled',
    ]);
  });

  it("the caller's abort ends a wait between attempts with its reason", async () => {
    const { breaker } = breakerWithEvents();
    const policy = withRetry(breaker, { attempts: 3, backoff: NO_JITTER, budget: false });
    const controller = new AbortController();
    const fn = vi.fn(() => Promise.reject(new Error('down')));
    const call = policy.execute(fn, { signal: controller.signal });
    await elapse(50);
    const reason = new Error('enough');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    await elapse(1_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('spreads the backoff with jitter drawn from the breaker random source', async () => {
    const breaker = new Breaker('jitter', { timeoutMs: false }, { clock, random: () => 0.5 });
    const retries: RetryEvent[] = [];
    breaker.on('retry', (event) => retries.push(event));
    const policy = withRetry(breaker, {
      attempts: 2,
      backoff: { initialMs: 1_000, jitter: 0.5 },
      budget: false,
    });
    const call = policy.execute(() => Promise.reject(new Error('x')));
    const outcome = expect(call).rejects.toThrow('x');
    await elapse(750);
    await outcome;
    expect(retries[0]!.delayMs).toBe(750);
  });

  it("a per-key child's next attempt goes to its key's child now, not the one evicted meanwhile", async () => {
    const family = new Breaker(
      'inventory',
      { timeoutMs: false, perKey: { maxKeys: 1 }, bulkhead: { maxConcurrent: 1, maxQueue: 0 } },
      { clock },
    );
    const running: string[] = [];
    const pending: (() => void)[] = [];
    /** A call of `key` that runs until the test ends it (`fail`: the first attempt fails at once). */
    const work = (key: string, fail: boolean) => () => {
      if (fail) return Promise.reject(new Error('down'));
      running.push(key);
      return new Promise<string>((resolve) => pending.push(() => resolve(key)));
    };
    let attempts = 0;
    const retried = withRetry(family.forKey('a'), {
      attempts: 2,
      backoff: NO_JITTER,
      budget: false,
    }).execute(() => work('a', attempts++ === 0)());
    await vi.advanceTimersByTimeAsync(0);
    // Between its attempts, 'b' evicts 'a' (closed, its bulkhead idle), then 'a' comes back with a call of its own.
    const other = family.forKey('b').execute(work('b', false));
    pending.shift()!();
    expect(await other).toBe('b');
    const own = family.forKey('a').execute(work('a', false));
    await vi.advanceTimersByTimeAsync(0);
    expect(running).toEqual(['b', 'a']);
    // The next attempt meets the key's child, its one slot taken (before the fix: a second call of 'a' ran).
    const refused = expect(retried).rejects.toMatchObject({ reason: 'bulkhead-full' });
    await elapse(100);
    expect(running).toEqual(['b', 'a']);
    await refused;
    expect(attempts).toBe(1);
    pending.shift()!();
    expect(await own).toBe('a');
    expect(family.snapshot().family).toMatchObject({ keys: 1, evicted: 2 });
  });

  it('checks its options, naming the breaker and the option', () => {
    const breaker = new Breaker('payments');
    const error = (options: unknown) => {
      try {
        withRetry(breaker, options as never);
      } catch (caught) {
        return caught;
      }
      return undefined;
    };
    expect(error({ attempts: 0 })).toEqual(
      new BreakerConfigError(
        'Circuit breaker "payments": option "retry.attempts" must be an integer in [1, 10], got 0.',
        'payments',
        'retry.attempts',
      ),
    );
    expect((error({ attempts: 2, backoff: { tries: 1 } }) as Error).message).toContain(
      'unknown option "retry.backoff.tries"',
    );
    expect((error({ attempts: 2, budget: { ratio: 2 } }) as Error).message).toContain(
      'option "retry.budget.ratio" must be a number in [0, 1], got 2.',
    );
    expect((error({ attempts: 2, backoff: { initialMs: 500, maxMs: 100 } }) as Error).message).toBe(
      'Circuit breaker "payments": option "retry.backoff.maxMs" (100) is below "retry.backoff.initialMs" (500): the first wait would already be past the cap. Raise "retry.backoff.maxMs" to at least 500, or lower "retry.backoff.initialMs".',
    );
    expect(() => withRetry({} as never, { attempts: 2 })).toThrow(
      'withRetry() takes a Breaker, got an object',
    );
  });
});
