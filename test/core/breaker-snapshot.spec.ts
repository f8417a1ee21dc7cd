import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { CountingClock } from '../helpers/counting-clock.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('Breaker events and snapshot', () => {
  it('emits success, failure, ignored, rejected, slowCall, timeout and probe events with their payloads', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'observed',
      {
        consecutiveFailures: 2,
        openDurationMs: 50,
        slowCallDurationMs: 10,
        classify: (e) => ((e as Error).message === 'skip' ? 'ignored' : undefined),
      },
      { clock },
    );
    const seen: unknown[] = [];
    for (const name of [
      'success',
      'failure',
      'ignored',
      'rejected',
      'slowCall',
      'probe',
    ] as const) {
      breaker.on(name, (payload) =>
        seen.push([
          name,
          'error' in payload && name === 'rejected'
            ? { reason: (payload as { reason: string }).reason }
            : payload,
        ]),
      );
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
    // Reported once: the second error of the same listener would only repeat the first.
    expect(reported.map((e) => [e.message, e.cause])).toEqual([
      [
        'Circuit breaker "listeners": an on(\'success\') listener threw Error: listener bug. The call it observed was not affected; catch errors inside the listener. Later errors of this listener are not reported again.',
        bug,
      ],
    ]);
  });

  it('a listener that comes and goes does not leave the breaker timing every call', async () => {
    const clock = new CountingClock();
    const breaker = new Breaker('transient', {}, { clock });
    const call = () => breaker.execute(() => 'ok');
    expect(await clock.readsDuring(call)).toBe(0);
    const off = breaker.on('success', () => undefined);
    const offChange = breaker.on('stateChange', () => undefined);
    // A listener of durations: the call is timed, at its start and at its end.
    expect(await clock.readsDuring(call)).toBe(2);
    off();
    expect(await clock.readsDuring(call)).toBe(0);
    offChange();
    expect(await clock.readsDuring(call)).toBe(0);
    // A time window always times its calls (a reading at the start and one at the end, besides its own), listener or not.
    const timeWindow = new Breaker(
      'time',
      { window: { type: 'time', durationMs: 1_000 } },
      { clock },
    );
    timeWindow.on('success', () => undefined)();
    expect(await clock.readsDuring(() => timeWindow.execute(() => 'ok'))).toBeGreaterThanOrEqual(2);
  });

  it('reports the window, totals, time in state and thresholds', async () => {
    const clock = new ManualClock(1_000);
    const breaker = new Breaker(
      'snap',
      {
        window: { type: 'count', size: 10 },
        minimumThroughput: 5,
        openDurationMs: 200,
        timeoutMs: 1_000,
      },
      { clock },
    );
    await breaker.execute(() => 1);
    clock.advance(10);
    await breaker
      .execute(() => Promise.reject(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })))
      .catch(() => undefined);
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
      window: {
        type: 'count',
        size: 10,
        calls: 3,
        failures: 1,
        slowCalls: 0,
        overloads: 1,
        shed: 0,
        failureRate: 1 / 3,
        slowCallRate: 0,
      },
      halfOpen: undefined,
      totals: {
        admitted: 4,
        rejected: {
          open: 0,
          'half-open-busy': 0,
          isolated: 0,
          'retry-after': 0,
          throttled: 0,
          'bulkhead-full': 0,
          'ramp-up': 0,
          total: 0,
        },
        successes: 2,
        failures: { timeout: 0, connection: 1, server: 0, other: 0, total: 1 },
        ignored: 0,
        overloads: 1,
        timeouts: 0,
        slowCalls: 0,
        probes: { admitted: 0, succeeded: 0, failed: 0, released: 0, abandoned: 0 },
        fallbacks: 0,
        retries: { attempted: 0, denied: 0 },
        healthChecks: { succeeded: 0, failed: 0 },
      },
      timeInStateMs: {
        closed: 15,
        open: 0,
        'half-open': 0,
        isolated: 0,
        disabled: 0,
        'metrics-only': 0,
      },
      lastFailure: { category: 'overload', name: 'Error', message: 'HTTP 429', status: 429 },
      thresholds: {
        failureRateThreshold: 0.5,
        minimumThroughput: 5,
        consecutiveFailures: 10,
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
    const breaker = new Breaker(
      'timing',
      { consecutiveFailures: 1, openDurationMs: 300, halfOpen: { maxProbes: 2, maxConcurrent: 2 } },
      { clock },
    );
    clock.advance(100);
    await breaker.execute(() => Promise.reject(new Error('x'))).catch(() => undefined);
    clock.advance(300);
    const pending = breaker.execute(() => new Promise(() => undefined));
    void pending;
    clock.advance(20);
    const snap = breaker.snapshot();
    expect(snap.halfOpen).toEqual({
      probesAdmitted: 1,
      probesInFlight: 1,
      probesSucceeded: 0,
      probesFailed: 0,
    });
    expect(snap.timeInStateMs).toEqual({
      closed: 100,
      open: 300,
      'half-open': 20,
      isolated: 0,
      disabled: 0,
      'metrics-only': 0,
    });
    expect(snap.generation).toBe(2);
  });

  it('keeps why it is in its state: the transition and the window that opened it, the last failure', async () => {
    const clock = new ManualClock(0);
    const breaker = new Breaker(
      'why',
      { window: { type: 'count', size: 10 }, minimumThroughput: 4, openDurationMs: 3_000 },
      { clock },
    );
    await breaker.execute(() => 'ok');
    for (let i = 0; i < 3; i++)
      await breaker
        .execute(() => Promise.reject(Object.assign(new Error('upstream 502'), { status: 502 })))
        .catch(() => undefined);
    const opened = breaker.snapshot();
    // The window starts empty in the open state; the evidence stays.
    expect(opened.window).toMatchObject({ calls: 0, failures: 0, failureRate: 0 });
    expect(opened.lastTransition).toEqual({
      from: 'closed',
      to: 'open',
      reason: 'failure-rate',
      at: 0,
      window: { calls: 4, failures: 3, slowCalls: 0, failureRate: 0.75 },
    });
    expect(opened.lastFailure).toEqual({
      category: 'server',
      name: 'Error',
      status: 502,
      message: 'upstream 502',
    });
  });

  it('dates a lazy transition when it was due: an untouched breaker read later says when it half-opened', async () => {
    const clock = new ManualClock(0);
    const breaker = new Breaker(
      'lazy',
      { consecutiveFailures: 1, openDurationMs: 3_000 },
      { clock },
    );
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    clock.advance(15_000);
    const snap = breaker.snapshot();
    expect(snap).toMatchObject({
      state: 'half-open',
      since: 3_000,
      lastTransition: { from: 'open', to: 'half-open', reason: 'open-duration-elapsed', at: 3_000 },
    });
    expect(snap.timeInStateMs).toMatchObject({ open: 3_000, 'half-open': 12_000 });
  });

  it("dates an expired probe's reopening when the probe was due", async () => {
    const clock = new ManualClock(0);
    const breaker = new Breaker(
      'expired',
      { consecutiveFailures: 1, openDurationMs: 1_000, halfOpen: { maxWaitMs: 2_000 } },
      { clock },
    );
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    clock.advance(1_000);
    breaker.execute(() => new Promise(() => undefined)).catch(() => undefined);
    clock.advance(2_500);
    expect(breaker.snapshot()).toMatchObject({
      state: 'open',
      since: 3_000,
      openUntil: 4_000,
      lastTransition: { reason: 'probe-expired', at: 3_000 },
    });
  });

  it('a probe that expired long ago, whose open period is over too, is read as half-open since that period ended', async () => {
    const clock = new ManualClock(0);
    const breaker = new Breaker(
      'expired',
      { consecutiveFailures: 1, openDurationMs: 1_000, halfOpen: { maxWaitMs: 2_000 } },
      { clock },
    );
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    clock.advance(1_000);
    breaker.execute(() => new Promise(() => undefined)).catch(() => undefined);
    clock.advance(10_000);
    const snap = breaker.snapshot();
    expect(snap).toMatchObject({
      state: 'half-open',
      since: 4_000,
      lastTransition: { reason: 'open-duration-elapsed', at: 4_000 },
    });
    expect(snap.timeInStateMs).toMatchObject({ closed: 0, open: 2_000, 'half-open': 9_000 });
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
