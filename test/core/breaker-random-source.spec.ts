/**
 * Random sources the application gives (`deps.random`, `injectFault({ random })`)
 * are never trusted: a draw that throws, or is not a number in [0, 1), is a
 * hook error of that source, reported once, and counts as 0.5. Nothing drawn may
 * escape into a call already admitted (a probe permit left taken), nor make
 * an open duration NaN or infinite (a breaker open for good).
 */
import { describe, expect, it, vi } from 'vitest';
import { Breaker, withRetry } from '../../lib/core/index.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';

const START = 1_700_000_000_000;
const failWith = (breaker: Breaker) =>
  breaker.execute(() => Promise.reject(new Error('down'))).catch((error: Error) => error.message);

const throwing = () => {
  throw new Error('no entropy');
};
const bad: [string, () => number][] = [
  ['throws', throwing],
  ['returns NaN', () => Number.NaN],
  ['returns Infinity', () => Infinity],
  ['returns 1', () => 1],
  ['returns -0.25', () => -0.25],
  ['returns a string', () => '0.3' as unknown as number],
];

describe('random sources the application gives', () => {
  describe.each(bad)('deps.random that %s', (_, random) => {
    it('opens for the open duration itself (the draw counts as 0.5), and is reported once', async () => {
      const clock = new ManualClock(START);
      const reports: Error[] = [];
      const breaker = new Breaker(
        'jittered',
        { consecutiveFailures: 1, openDurationMs: 10_000, jitter: 0.2 },
        { clock, random, reportError: (error) => reports.push(error) },
      );
      // The failing call gets its own error, not the random source's.
      expect(await failWith(breaker)).toBe('down');
      expect(breaker.snapshot().openUntil).toBe(START + 10_000);
      clock.advance(10_000);
      expect(breaker.state).toBe('half-open');
      // The probe fails: it reopens for the open duration again, and recovers after it.
      expect(await failWith(breaker)).toBe('down');
      expect(breaker.snapshot().openUntil).toBe(START + 20_000);
      clock.advance(10_000);
      expect(await breaker.execute(() => 'ok')).toBe('ok');
      expect(breaker.state).toBe('closed');
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatchObject({ name: 'BreakerHookError' });
      expect(reports[0]!.message).toMatch(
        /^Circuit breaker "jittered": deps\.random (threw|returned) .*The draw counted as 0\.5 and the call was not affected/,
      );
    });

    it('sheds by the draw 0.5 under overload, never throwing from execute()', async () => {
      const reports: Error[] = [];
      const breaker = new Breaker(
        'throttled',
        { window: { type: 'count', size: 100 } },
        { random, reportError: (error) => reports.push(error) },
      );
      // 1 accepted call and 19 overloads: requests 20, accepts 1, p = (20 - 2) / 21 = 0.857 > 0.5: shed.
      await breaker.execute(() => 'ok');
      for (let i = 0; i < 19; i++)
        await breaker.execute(() => Promise.reject(httpError(429))).catch(() => undefined);
      let outcome: unknown;
      expect(() => {
        outcome = breaker.execute(() => 'ok');
      }).not.toThrow();
      await expect(outcome).rejects.toMatchObject({ reason: 'throttled' });
      expect(reports).toHaveLength(1);
    });

    it("a retry's jitter draws 0.5: the wait is the backoff less half its jitter share", async () => {
      const clock = new ManualClock(START);
      const reports: Error[] = [];
      const breaker = new Breaker(
        'retried',
        { consecutiveFailures: 10 },
        { clock, random, reportError: (error) => reports.push(error) },
      );
      const waits: number[] = [];
      breaker.on('retry', (event) => {
        if (event.result === 'scheduled') waits.push(event.delayMs);
      });
      let attempts = 0;
      const retrying = withRetry(breaker, {
        attempts: 2,
        backoff: { initialMs: 100, jitter: 0.5 },
      });
      vi.useFakeTimers();
      try {
        const result = retrying.execute(() =>
          ++attempts === 1 ? Promise.reject(httpError(503)) : 'ok',
        );
        await vi.advanceTimersByTimeAsync(75);
        expect(await result).toBe('ok');
      } finally {
        vi.useRealTimers();
      }
      expect(waits).toEqual([75]);
      expect(reports).toHaveLength(1);
    });
  });

  describe.each(bad)('injectFault({ random }) that %s', (_, random) => {
    it('never throws from execute() after admission: a half-open probe runs, settles and closes the breaker', async () => {
      const clock = new ManualClock(START);
      const reports: Error[] = [];
      const breaker = new Breaker(
        'probed',
        { consecutiveFailures: 1, openDurationMs: 1_000, jitter: 0, halfOpen: { maxProbes: 1 } },
        { clock, faultInjection: true, reportError: (error) => reports.push(error) },
      );
      await failWith(breaker);
      clock.advance(1_000);
      // rate 0.4: the draw 0.5 is not below it, so the call reaches the dependency.
      breaker.injectFault({ fail: true, rate: 0.4, random });
      let probe: Promise<string> | undefined;
      expect(() => {
        probe = breaker.execute(() => 'recovered');
      }).not.toThrow();
      expect(await probe).toBe('recovered');
      expect(breaker.state).toBe('closed');
      // Once per injection, however many draws fail.
      for (let i = 0; i < 3; i++) await breaker.execute(() => 'ok');
      expect(reports).toHaveLength(1);
      expect(reports[0]!.message).toMatch(
        /^Circuit breaker "probed": injectFault\(\) option "random" (threw|returned) .*The draw counted as 0\.5/,
      );
    });

    it('with a rate above one half, the faulty draw gives the call the fault', async () => {
      const breaker = new Breaker(
        'faulted',
        { consecutiveFailures: 100 },
        { faultInjection: true, reportError: () => undefined },
      );
      const fault = breaker.injectFault({ fail: true, rate: 0.6, random });
      await expect(breaker.execute(() => 'never')).rejects.toMatchObject({
        name: 'InjectedFaultError',
      });
      expect(fault.injected).toBe(1);
    });
  });
});
