import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, CallTimeoutError } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('Breaker per-call timeout', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('rejects with CallTimeoutError, aborts the call signal, counts a timeout failure and discards the late result', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('slow-api', { timeoutMs: 200 }, { clock });
    let signal: AbortSignal | undefined;
    let resolveLate!: (v: string) => void;
    const call = breaker.execute(({ signal: s }) => {
      signal = s;
      return new Promise<string>((resolve) => (resolveLate = resolve));
    });
    const outcome = expect(call).rejects.toMatchObject({
      name: 'CallTimeoutError',
      code: 'CALL_TIMEOUT',
      timeoutMs: 200,
      breakerName: 'slow-api',
    });
    expect(signal?.aborted).toBe(false);
    vi.advanceTimersByTime(199);
    expect(signal?.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    await outcome;
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(CallTimeoutError);
    expect(signal?.reason).toMatchObject({ breakerName: 'slow-api', timeoutMs: 200 });
    resolveLate('late');
    await Promise.resolve();
    expect(breaker.snapshot().totals).toMatchObject({
      timeouts: 1,
      successes: 0,
      failures: { total: 1, timeout: 1 },
    });
  });

  it('a call that settles first leaves nothing to expire: its deadline passes without effect', async () => {
    const breaker = new Breaker('fast-api', { timeoutMs: 1_000 });
    await expect(breaker.execute(() => Promise.resolve(7))).resolves.toBe(7);
    await expect(breaker.execute(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(breaker.snapshot().totals).toMatchObject({
      successes: 1,
      timeouts: 0,
      failures: { total: 1, other: 1, timeout: 0 },
    });
    // The shared deadline timer fired once with nothing to do, and was not armed again.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives each call its own signal linked to the caller signal; a caller abort is ignored, not a failure', async () => {
    const breaker = new Breaker('linked', { timeoutMs: 1_000, consecutiveFailures: 1 });
    const caller = new AbortController();
    let signal: AbortSignal | undefined;
    const call = breaker.execute(
      ({ signal: s }) => {
        signal = s;
        return new Promise(() => undefined);
      },
      { signal: caller.signal },
    );
    expect(signal).not.toBe(caller.signal);
    caller.abort(new Error('client went away'));
    await expect(call).rejects.toThrow('client went away');
    expect(signal?.aborted).toBe(true);
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().totals).toMatchObject({ ignored: 1, failures: { total: 0 } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(breaker.snapshot().totals).toMatchObject({
      ignored: 1,
      timeouts: 0,
      failures: { total: 0 },
    });
  });

  it('a function that rejects because the caller aborted is ignored', async () => {
    const breaker = new Breaker('abort-propagates', { consecutiveFailures: 1 });
    const caller = new AbortController();
    const call = breaker.execute(
      ({ signal }) =>
        new Promise((_, reject) =>
          signal!.addEventListener('abort', () =>
            reject(new DOMException('aborted', 'AbortError')),
          ),
        ),
      { signal: caller.signal },
    );
    caller.abort();
    // The caller gets its own abort reason, not the function's rejection.
    await expect(call).rejects.toBe(caller.signal.reason);
    expect(caller.signal.reason).toMatchObject({
      name: 'AbortError',
      message: 'This operation was aborted',
    });
    expect(breaker.state).toBe('closed');
  });

  it('does not call the function when the caller signal is already aborted', async () => {
    const breaker = new Breaker('pre-aborted');
    const fn = vi.fn();
    await expect(
      breaker.execute(fn, { signal: AbortSignal.abort(new Error('already')) }),
    ).rejects.toThrow('already');
    expect(fn).not.toHaveBeenCalled();
    expect(breaker.snapshot().totals.admitted).toBe(0);
  });

  it('a caller that aborts while the call is being started gets its own reason', async () => {
    const breaker = new Breaker('abort-inside', { timeoutMs: 1_000 });
    const controller = new AbortController();
    const call = breaker.execute(
      () => {
        controller.abort(new Error('changed my mind'));
        return new Promise(() => undefined);
      },
      { signal: controller.signal },
    );
    await expect(call).rejects.toThrow('changed my mind');
    expect(breaker.snapshot().totals.ignored).toBe(1);
  });

  it('bounds probes with halfOpen.probeTimeoutMs', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'probe-deadline',
      {
        consecutiveFailures: 1,
        openDurationMs: 100,
        timeoutMs: false,
        halfOpen: { probeTimeoutMs: 50 },
      },
      { clock },
    );
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    clock.advance(100);
    const probe = breaker.execute(() => new Promise(() => undefined));
    const outcome = expect(probe).rejects.toMatchObject({ code: 'CALL_TIMEOUT', timeoutMs: 50 });
    vi.advanceTimersByTime(50);
    await outcome;
    expect(breaker.state).toBe('open');
    // Only probes have a deadline here.
    expect(breaker.snapshot().thresholds.timeoutMs).toBeUndefined();
  });

  it('gives every asynchronous call a 2 s deadline by default: a hang counts as a failure and releases its caller', async () => {
    const breaker = new Breaker('default-deadline', { consecutiveFailures: 2 });
    const hung = [
      breaker.execute(() => new Promise(() => undefined)),
      breaker.execute(() => new Promise(() => undefined)),
    ];
    const outcomes = Promise.allSettled(hung);
    vi.advanceTimersByTime(1_999);
    expect(breaker.snapshot().totals.timeouts).toBe(0);
    vi.advanceTimersByTime(1);
    expect(
      (await outcomes).map((o) =>
        o.status === 'rejected' ? (o.reason as CallTimeoutError).timeoutMs : o.status,
      ),
    ).toEqual([2_000, 2_000]);
    expect(breaker.snapshot()).toMatchObject({
      state: 'open',
      totals: { timeouts: 2, failures: { timeout: 2 } },
    });
    // A synchronous result never waits for it.
    expect(await new Breaker('sync').execute(() => 7)).toBe(7);
  });

  it('counts a timed-out call as slow when the timeout is past the slow threshold', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'slow-timeout',
      { timeoutMs: 100, slowCallDurationMs: 80 },
      { clock },
    );
    const call = breaker.execute(() => new Promise(() => undefined));
    clock.advance(100);
    vi.advanceTimersByTime(100);
    await call.catch(() => undefined);
    expect(breaker.snapshot().window).toMatchObject({ calls: 1, failures: 1, slowCalls: 1 });
  });

  it('uses an unref()ed timer so a pending deadline never keeps the process alive', () => {
    vi.useRealTimers();
    const unref = vi.fn();
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation((() => ({ unref })) as never);
    try {
      const breaker = new Breaker('unref', { timeoutMs: 10 });
      void breaker.execute(() => new Promise(() => undefined));
      expect(unref).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });
});
