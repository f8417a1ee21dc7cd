import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { httpError, ManualClock } from '../helpers/manual-clock.js';

describe('Breaker events and snapshot', () => {
  it('emits success, failure, ignored, rejected, slowCall, timeout and probe events with their payloads', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('observed', { consecutiveFailures: 2, openDurationMs: 50, slowCallDurationMs: 10, classify: (e) => ((e as Error).message === 'skip' ? 'ignored' : undefined) }, { clock });
    const seen: unknown[] = [];
    for (const name of ['success', 'failure', 'ignored', 'rejected', 'slowCall', 'probe'] as const) {
      breaker.on(name, (payload) => seen.push([name, 'error' in payload && name === 'rejected' ? { reason: (payload as { reason: string }).reason } : payload]));
    }
    await breaker.execute(() => {
      clock.advance(12);
      return 'slow ok';
    });
    const skip = new Error('skip');
    await breaker.execute(() => Promise.reject(skip)).catch(() => undefined);
    const e500 = httpError(500);
    await breaker.execute(() => Promise.reject(e500)).catch(() => undefined);
    await breaker.execute(() => Promise.reject(e500)).catch(() => undefined);
    await breaker.execute(() => 1).catch(() => undefined);
    clock.advance(50);
    await breaker.execute(() => 'probe ok');
    expect(seen).toEqual([
      ['success', { durationMs: 12, probe: false }],
      ['slowCall', { durationMs: 12, thresholdMs: 10, outcome: 'success' }],
      ['ignored', { error: skip, durationMs: 0, probe: false }],
      ['failure', { error: e500, category: 'server', durationMs: 0, probe: false }],
      ['failure', { error: e500, category: 'server', durationMs: 0, probe: false }],
      ['rejected', { reason: 'open' }],
      ['probe', { result: 'admitted' }],
      ['success', { durationMs: 0, probe: true }],
      ['probe', { result: 'succeeded' }],
    ]);
  });

  it('on() returns an unsubscribe function, and a throwing listener neither breaks the call nor starves others', async () => {
    const reported: Error[] = [];
    const breaker = new Breaker('listeners', {}, { reportError: (error) => reported.push(error) });
    const calls: string[] = [];
    const off = breaker.on('success', () => calls.push('a'));
    const bug = new Error('listener bug');
    breaker.on('success', () => {
      throw bug;
    });
    breaker.on('success', () => calls.push('c'));
    await expect(breaker.execute(() => 1)).resolves.toBe(1);
    off();
    await expect(breaker.execute(() => 2)).resolves.toBe(2);
    expect(calls).toEqual(['a', 'c', 'c']);
    // Reported once: the second fault of the same listener would only repeat the first.
    expect(reported.map((e) => [e.message, e.cause])).toEqual([
      [
        'Circuit breaker "listeners": an on(\'success\') listener threw Error: listener bug. The call it observed was not affected; catch errors inside the listener. Later faults of this listener are not reported again.',
        bug,
      ],
    ]);
  });


  it('reports the window, totals, time in state and thresholds', async () => {
    const clock = new ManualClock(1_000);
    const breaker = new Breaker('snap', { window: { type: 'count', size: 10 }, minimumThroughput: 5, openDurationMs: 200, timeoutMs: 1_000 }, { clock });
    await breaker.execute(() => 1);
    clock.advance(10);
    await breaker.execute(() => Promise.reject(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).catch(() => undefined);
    await breaker.execute(() => Promise.reject(httpError(404))).catch(() => undefined);
    await breaker.execute(() => Promise.reject(httpError(429))).catch(() => undefined);
    clock.advance(5);
    expect(breaker.snapshot()).toEqual({
      name: 'snap',
      state: 'closed',
      since: 1_000,
      openUntil: undefined,
      pausedUntil: undefined,
      retryAfterMs: undefined,
      generation: 0,
      window: { type: 'count', size: 10, calls: 3, failures: 1, slowCalls: 0, overloads: 1, shed: 0, failureRate: 1 / 3, slowCallRate: 0 },
      halfOpen: undefined,
      totals: {
        admitted: 4,
        rejected: { open: 0, 'half-open-busy': 0, isolated: 0, 'retry-after': 0, throttled: 0, total: 0 },
        successes: 2,
        failures: { timeout: 0, connection: 1, server: 0, other: 0, total: 1 },
        ignored: 0,
        overloads: 1,
        timeouts: 0,
        slowCalls: 0,
        probes: { admitted: 0, succeeded: 0, failed: 0, released: 0 },
        fallbacks: 0,
      },
      timeInStateMs: { closed: 15, open: 0, 'half-open': 0, isolated: 0, disabled: 0 },
      thresholds: {
        failureRateThreshold: 0.5,
        minimumThroughput: 5,
        consecutiveFailures: undefined,
        slowCallDurationMs: undefined,
        slowCallRateThreshold: undefined,
        timeoutMs: 1_000,
        openDurationMs: 200,
        nextOpenDurationMs: 200,
        maxProbes: 1,
        maxConcurrentProbes: 1,
        successesToClose: 1,
      },
    });
  });

  it('reports the half-open budget in use and accumulates time per state', async () => {
    const clock = new ManualClock(0);
    const breaker = new Breaker('timing', { consecutiveFailures: 1, openDurationMs: 300, halfOpen: { maxProbes: 2, maxConcurrent: 2 } }, { clock });
    clock.advance(100);
    await breaker.execute(() => Promise.reject(new Error('x'))).catch(() => undefined);
    clock.advance(300);
    const pending = breaker.execute(() => new Promise(() => undefined));
    void pending;
    clock.advance(20);
    const snap = breaker.snapshot();
    expect(snap.halfOpen).toEqual({ probesAdmitted: 1, probesInFlight: 1, probesSucceeded: 0, probesFailed: 0 });
    expect(snap.timeInStateMs).toEqual({ closed: 100, open: 300, 'half-open': 20, isolated: 0, disabled: 0 });
    expect(snap.generation).toBe(2);
  });

  it('a snapshot is a copy: mutating it does not touch the breaker', async () => {
    const breaker = new Breaker('copy');
    await breaker.execute(() => 1);
    const snap = breaker.snapshot();
    snap.totals.successes = 99;
    snap.totals.failures.total = 99;
    expect(breaker.snapshot().totals.successes).toBe(1);
    expect(breaker.snapshot().totals.failures.total).toBe(0);
  });
});
