import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, CallTimeoutError } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('CallPermit.watchDeadline()', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts a timeout at the deadline of a call settled by hand, aborts its signal and tells the caller', () => {
    const breaker = new Breaker('client', { timeoutMs: 300 }, { clock: new ManualClock() });
    const permit = breaker.acquire();
    const heard: CallTimeoutError[] = [];
    permit.watchDeadline((error) => heard.push(error));
    vi.advanceTimersByTime(299);
    expect([heard.length, permit.signal.aborted, permit.outcome]).toEqual([0, false, undefined]);
    vi.advanceTimersByTime(1);
    expect(heard).toEqual([expect.objectContaining({ breakerName: 'client', timeoutMs: 300 })]);
    expect(heard[0]).toBeInstanceOf(CallTimeoutError);
    expect(permit.signal.reason).toBe(heard[0]);
    expect(permit.outcome).toBe('timeout');
    expect(breaker.snapshot().totals).toMatchObject({
      timeouts: 1,
      failures: { timeout: 1, total: 1 },
    });
    // Settled by the deadline: a late answer changes nothing.
    expect(permit.succeed('late')).toBe('failure');
    expect(breaker.snapshot().totals).toMatchObject({ successes: 0, failures: { total: 1 } });
  });

  it('does nothing once the call is settled, without a deadline, or twice', () => {
    const breaker = new Breaker('client', { timeoutMs: 300 }, { clock: new ManualClock() });
    const settled = breaker.acquire();
    const heard: unknown[] = [];
    settled.succeed('ok');
    settled.watchDeadline((error) => heard.push(error));
    const twice = breaker.acquire();
    twice.watchDeadline((error) => heard.push(['first', error]));
    twice.watchDeadline((error) => heard.push(['second', error]));
    const none = new Breaker('no-deadline', { timeoutMs: false }).acquire();
    none.watchDeadline((error) => heard.push(error));
    vi.advanceTimersByTime(10_000);
    expect(heard).toEqual([['first', expect.any(CallTimeoutError)]]);
    expect(none.outcome).toBeUndefined();
    expect(breaker.snapshot().totals).toMatchObject({ successes: 1, timeouts: 1 });
  });

  it('is a no-op on a call a disabled breaker lets through uncounted', () => {
    const breaker = new Breaker('off', { timeoutMs: 300 });
    breaker.force('disabled', { reason: 'load test' });
    const permit = breaker.acquire();
    const heard: unknown[] = [];
    permit.watchDeadline((error) => heard.push(error));
    vi.advanceTimersByTime(10_000);
    expect(heard).toEqual([]);
    expect(permit.signal.aborted).toBe(false);
  });
});
