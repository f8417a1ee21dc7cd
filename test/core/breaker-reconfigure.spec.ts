import { describe, expect, it } from 'vitest';
import { Breaker, BreakerConfigError, type ReconfiguredEvent } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { ManualClock } from '../helpers/manual-clock.js';

const fail = () => Promise.reject(new Error('down'));

describe('Breaker.reconfigure()', () => {
  it('keeps state, counters, streak and window when the window keeps its shape; the new thresholds judge the next call', async () => {
    const breaker = new Breaker(
      'payments',
      { timeoutMs: false, consecutiveFailures: 5 },
      { clock: new ManualClock() },
    );
    for (let i = 0; i < 2; i++) await breaker.execute(fail).catch(() => undefined);
    const result = breaker.reconfigure({ timeoutMs: false, consecutiveFailures: 3 });
    expect(result.reset).toEqual([]);
    expect([
      breaker.state,
      breaker.snapshot().window.failures,
      breaker.snapshot().totals.failures.total,
    ]).toEqual(['closed', 2, 2]);
    await breaker.execute(fail).catch(() => undefined);
    expect([breaker.state, breaker.snapshot().lastTransition?.reason]).toEqual([
      'open',
      'consecutive-failures',
    ]);
  });

  it('starts the window afresh when its shape changes, and says so', async () => {
    const breaker = new Breaker('payments', {
      timeoutMs: false,
      window: { type: 'count', size: 10 },
    });
    await breaker.execute(fail).catch(() => undefined);
    const result = breaker.reconfigure({ timeoutMs: false, window: { type: 'count', size: 20 } });
    expect(result.reset).toEqual(['window']);
    expect([
      breaker.snapshot().window.calls,
      breaker.snapshot().window.size,
      breaker.snapshot().totals.failures.total,
    ]).toEqual([0, 20, 1]);
  });

  it('emits reconfigured with the options before and after, to listeners that stay subscribed', () => {
    const breaker = new Breaker('payments', { openDurationMs: 10_000 });
    const events: ReconfiguredEvent[] = [];
    breaker.on('reconfigured', (event) => events.push(event));
    breaker.reconfigure({ openDurationMs: 20_000 });
    breaker.reconfigure({ openDurationMs: 30_000 });
    expect(
      events.map((event) => [
        event.previous.openDurationMs,
        event.current.openDurationMs,
        event.reset,
      ]),
    ).toEqual([
      [10_000, 20_000, []],
      [20_000, 30_000, []],
    ]);
    expect(breaker.config.openDurationMs).toBe(30_000);
  });

  it('refuses invalid options with the constructor’s own error, and changes nothing', () => {
    const breaker = new Breaker('payments', { failureRateThreshold: 0.5 });
    const thrown = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error as BreakerConfigError;
      }
      throw new Error('expected an error');
    };
    const atStart = thrown(() => new Breaker('payments', { failureRateThreshold: 2 }));
    const atRuntime = thrown(() => breaker.reconfigure({ failureRateThreshold: 2 }));
    expect(atRuntime).toBeInstanceOf(BreakerConfigError);
    expect([atRuntime.message, atRuntime.option]).toEqual([atStart.message, atStart.option]);
    expect(breaker.config.failureRateThreshold).toBe(0.5);
  });

  it('refuses to change perKey or share, naming the option and saying to restart', () => {
    const family = new Breaker('hosts', { perKey: { maxKeys: 10 } });
    expect(() => family.reconfigure({ perKey: { maxKeys: 20 } })).toThrow(
      'Circuit breaker "hosts": option "perKey" cannot change while the application runs (it decides how the breaker is built and shared). Keep its current value (in reconfigure() or the reloaded tree), and restart to change it.',
    );
    expect(() => new Breaker('plain').reconfigure({ share: false })).toThrow(
      'option "share" cannot change while the application runs',
    );
  });

  it('a family applies new options to every child; a child cannot be reconfigured alone', async () => {
    const family = new Breaker('hosts', {
      timeoutMs: false,
      perKey: { maxKeys: 10 },
      consecutiveFailures: 5,
    });
    const a = family.forKey('a');
    await a.execute(fail).catch(() => undefined);
    family.reconfigure({ timeoutMs: false, perKey: { maxKeys: 10 }, consecutiveFailures: 2 });
    expect([a.config, family.forKey('b').config]).toEqual([family.config, family.config]);
    await a.execute(fail).catch(() => undefined);
    expect(a.state).toBe('open');
    expect(() => a.reconfigure({})).toThrow(
      'Circuit breaker "hosts[a]" is a child of the per-key family "hosts": its options are the family\'s. Call reconfigure() on "hosts", which applies to every child.',
    );
  });

  it('calls in flight keep the deadline they were admitted with, and a half-open round keeps its probe budget', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'payments',
      {
        timeoutMs: 1_000,
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        halfOpen: { maxProbes: 1 },
      },
      { clock },
    );
    const inFlight = breaker.acquire();
    breaker.reconfigure({
      timeoutMs: 50,
      consecutiveFailures: 1,
      openDurationMs: 1_000,
      halfOpen: { maxProbes: 3, maxConcurrent: 3 },
    });
    expect([inFlight.timeoutMs, breaker.acquire().timeoutMs]).toEqual([1_000, 50]);
    inFlight.fail(new Error('down'));
    clock.advance(1_000);
    // Reconfigured while open: the next round is judged by the new budget...
    expect([breaker.acquire().probe, breaker.acquire().probe, breaker.acquire().probe]).toEqual([
      true,
      true,
      true,
    ]);
    // ...and a round in progress keeps its own: a fourth probe is refused under maxProbes 3 even if the options now say 5.
    breaker.reconfigure({
      timeoutMs: 50,
      consecutiveFailures: 1,
      openDurationMs: 1_000,
      halfOpen: { maxProbes: 5, maxConcurrent: 5 },
    });
    expect(() => breaker.acquire()).toThrow(expect.objectContaining({ reason: 'half-open-busy' }));
  });

  describe('a call in flight is judged by the options it started under', () => {
    // Before: errors are ignored, nothing is slow. After: errors are failures, 10 ms is slow.
    const before = {
      timeoutMs: false as const,
      classify: () => 'ignored' as const,
      classifyResult: () => 'success' as const,
      slowCallDurationMs: 60_000,
    };
    const after = {
      timeoutMs: false as const,
      classify: () => 'failure' as const,
      classifyResult: () => 'failure' as const,
      slowCallDurationMs: 10,
    };
    const run = async (options: { timeoutMs: false | number }, signal?: AbortSignal) => {
      const clock = new ManualClock();
      const breaker = new Breaker('payments', { ...before, ...options }, { clock });
      const rejected = deferred<string>();
      const resolved = deferred<string>();
      const failing = breaker.execute(() => rejected.promise, { signal }).catch(() => undefined);
      const succeeding = breaker.execute(() => resolved.promise, { signal });
      const permit = breaker.acquire();
      breaker.reconfigure({ ...after, ...options });
      clock.advance(100);
      rejected.reject(new Error('down'));
      resolved.resolve('ok');
      await Promise.all([failing, succeeding]);
      const counted = [permit.succeed('ok')];
      // A call admitted after the change is judged by the new options.
      await breaker.execute(() => 'new').catch(() => undefined);
      const { totals } = breaker.snapshot();
      return [counted, totals.ignored, totals.successes, totals.failures.total, totals.slowCalls];
    };

    it('on the plain path (no deadline, no signal)', async () => {
      expect(await run({ timeoutMs: false })).toEqual([['success'], 1, 2, 1, 0]);
    });

    it('with a deadline and a caller signal (a tracked call)', async () => {
      expect(await run({ timeoutMs: 5_000 }, new AbortController().signal)).toEqual([
        ['success'],
        1,
        2,
        1,
        0,
      ]);
    });
  });

  it('loses no call when reconfigured in the middle of 1,000 concurrent calls', async () => {
    const breaker = new Breaker('payments', { timeoutMs: 5_000 });
    const gates = Array.from({ length: 1_000 }, () => deferred<string>());
    const calls = gates.map((gate) => breaker.execute(() => gate.promise));
    breaker.reconfigure({ timeoutMs: 100, window: { type: 'count', size: 50 } });
    gates.forEach((gate, i) => gate.resolve(`ok-${i}`));
    const results = await Promise.all(calls);
    expect(results.filter((value, i) => value === `ok-${i}`)).toHaveLength(1_000);
    const totals = breaker.snapshot().totals;
    expect([
      totals.admitted,
      totals.successes,
      totals.failures.total,
      breaker.snapshot().window.calls,
    ]).toEqual([1_000, 1_000, 0, 50]);
  });

  it('expires a probe in flight by the wait its round was opened with, dated when it was due', async () => {
    const clock = new ManualClock(1_000_000);
    const options = {
      timeoutMs: false as const,
      consecutiveFailures: 1,
      openDurationMs: 1_000,
      halfOpen: { maxProbes: 1, maxWaitMs: 1_000 },
    };
    const breaker = new Breaker('payments', options, { clock });
    await breaker.execute(fail).catch(() => undefined);
    clock.advance(1_000);
    const probe = breaker.acquire();
    expect(probe.probe).toBe(true);
    breaker.reconfigure({ ...options, halfOpen: { maxProbes: 1, maxWaitMs: 60_000 } });
    clock.advance(1_000);
    const snapshot = breaker.snapshot();
    expect([
      snapshot.state,
      snapshot.lastTransition?.reason,
      snapshot.lastTransition?.at,
      snapshot.since,
    ]).toEqual(['open', 'probe-expired', 1_002_000, 1_002_000]);
    expect(snapshot.lastFailure?.message).toBe(
      'Circuit breaker "payments": a half-open probe did not settle within halfOpen.maxWaitMs (1000 ms) and counts as failed.',
    );
  });
});
