/* oxlint-disable unicorn/no-thenable -- hostile thenables are what these tests are about */
import { describe, expect, it } from 'vitest';
import { Breaker, CallTimeoutError } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { flush } from '../helpers/flush.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { SteppingClock } from '../helpers/stepping-clock.js';
import { collectUnhandled } from '../helpers/unhandled.js';

// Regression tests for the hostile-input defects of 0.1.0: each failed there.

/** An error whose `status` getter throws, as a broken client or a Proxy can produce. */
function errorWithThrowingStatus(): Error {
  const error = new Error('upstream said no');
  Object.defineProperty(error, 'status', {
    get() {
      throw new TypeError('status getter exploded');
    },
  });
  return error;
}

function openBreaker(
  options: ConstructorParameters<typeof Breaker>[1] = {},
  clock = new ManualClock(),
) {
  const breaker = new Breaker(
    'hostile',
    { consecutiveFailures: 1, openDurationMs: 1_000, ...options },
    { clock },
  );
  breaker.isolate();
  breaker.reset();
  return { breaker, clock };
}

describe('hostile input', () => {
  const unhandled = collectUnhandled();

  describe('a throwing getter on an error or a result', () => {
    it('on the tracked path: the caller gets its own error at once, the failure counts, nothing goes unhandled', async () => {
      const { breaker } = openBreaker({ timeoutMs: 100, consecutiveFailures: 2 });
      const error = errorWithThrowingStatus();
      await expect(breaker.execute(() => Promise.reject(error))).rejects.toBe(error);
      await flush();
      expect(unhandled).toEqual([]);
      expect(breaker.snapshot().totals.failures.total).toBe(1);
    });

    it("on the plain path: the caller gets its own error, not the getter's, and the failure counts", async () => {
      const { breaker } = openBreaker({ consecutiveFailures: 2 });
      const error = errorWithThrowingStatus();
      await expect(breaker.execute(() => Promise.reject(error))).rejects.toBe(error);
      expect(breaker.snapshot().totals.failures.total).toBe(1);
    });

    it('a probe whose error cannot be read is settled at once: the budget is free and the breaker reopens', async () => {
      const clock = new ManualClock();
      const breaker = new Breaker(
        'probe',
        { consecutiveFailures: 1, openDurationMs: 1_000, timeoutMs: 100 },
        { clock },
      );
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
      clock.advance(1_000);
      const error = errorWithThrowingStatus();
      await expect(breaker.execute(() => Promise.reject(error))).rejects.toBe(error);
      expect(breaker.state).toBe('open');
      expect(breaker.snapshot().totals.probes).toEqual({
        admitted: 1,
        succeeded: 0,
        failed: 1,
        released: 0,
        abandoned: 0,
      });
      await flush();
      expect(unhandled).toEqual([]);
    });

    it('a resolved value whose status cannot be read counts as a failure; the caller still gets it', async () => {
      const { breaker } = openBreaker({ consecutiveFailures: 1 });
      const response = Object.defineProperty({ headers: {} }, 'status', {
        get() {
          throw new TypeError('status getter exploded');
        },
      });
      await expect(breaker.execute(() => response)).resolves.toBe(response);
      expect(breaker.state).toBe('open');
    });

    it("a Retry-After that cannot be read is no hint: the breaker's own open duration applies", async () => {
      const clock = new ManualClock();
      const breaker = new Breaker(
        'hint',
        { consecutiveFailures: 1, openDurationMs: 1_000 },
        { clock },
      );
      const error = Object.assign(new Error('503'), { status: 503 });
      Object.defineProperty(error, 'headers', {
        get() {
          throw new Error('headers exploded');
        },
      });
      await expect(breaker.execute(() => Promise.reject(error))).rejects.toBe(error);
      expect(breaker.snapshot()).toMatchObject({ state: 'open', retryAfterMs: 1_000 });
    });
  });

  describe('a caller signal that is not an AbortSignal', () => {
    it.each([[{}], [null], ['abort'], [{ aborted: false }]])(
      '%j is refused before admission, naming the breaker and the option',
      async (signal) => {
        const clock = new ManualClock();
        const breaker = new Breaker(
          'payments',
          { consecutiveFailures: 1, openDurationMs: 1_000 },
          { clock },
        );
        await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
        clock.advance(1_000);
        expect(() => breaker.execute(() => 1, { signal: signal as never })).toThrow(
          /^Circuit breaker "payments": execute\(\) option "signal" must be an AbortSignal, got .+\. Pass an AbortController's signal, or leave it out\.$/,
        );
        // The probe permit was not taken: the next call is the probe.
        expect(breaker.snapshot().halfOpen).toEqual({
          probesAdmitted: 0,
          probesInFlight: 0,
          probesSucceeded: 0,
          probesFailed: 0,
        });
        await expect(breaker.execute(() => 'ok')).resolves.toBe('ok');
        expect(breaker.state).toBe('closed');
      },
    );
  });

  describe('a thenable whose then() throws', () => {
    const hostileThenable = (error: unknown) => ({
      then() {
        throw error;
      },
    });

    it('settles a tracked call at once as a failure, not later as a timeout', async () => {
      const { breaker } = openBreaker({ timeoutMs: 60_000, consecutiveFailures: 2 });
      const error = new Error('then exploded');
      await expect(
        breaker.execute(() => hostileThenable(error) as PromiseLike<number>),
      ).rejects.toBe(error);
      expect(breaker.snapshot().totals).toMatchObject({ timeouts: 0, failures: { total: 1 } });
    });

    it('returns the probe budget at once through acquire().track()', async () => {
      const clock = new ManualClock();
      const breaker = new Breaker(
        'track',
        { consecutiveFailures: 1, openDurationMs: 1_000, halfOpen: { maxWaitMs: 60_000 } },
        { clock },
      );
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
      clock.advance(1_000);
      const permit = breaker.acquire();
      expect(permit.probe).toBe(true);
      const error = new Error('then exploded');
      await expect(permit.track(hostileThenable(error) as PromiseLike<unknown>)).rejects.toBe(
        error,
      );
      expect(permit.outcome).toBe('failure');
      expect(breaker.snapshot()).toMatchObject({
        state: 'open',
        totals: { probes: { admitted: 1, failed: 1 } },
      });
    });

    it('a then() that resolves and then throws keeps the value, as a promise would', async () => {
      const { breaker } = openBreaker({ timeoutMs: 1_000 });
      const thenable = {
        then(resolve: (value: number) => void) {
          resolve(7);
          throw new Error('too late to matter');
        },
      };
      await expect(breaker.execute(() => thenable as PromiseLike<number>)).resolves.toBe(7);
      expect(breaker.snapshot().totals).toMatchObject({ successes: 1, failures: { total: 0 } });
    });

    it('a then getter that throws fails the call without leaking the admission', async () => {
      const { breaker } = openBreaker({ timeoutMs: 1_000, consecutiveFailures: 2 });
      const error = new Error('then getter exploded');
      const thenable = Object.defineProperty({}, 'then', {
        get() {
          throw error;
        },
      });
      await expect(breaker.execute(() => thenable as PromiseLike<unknown>)).rejects.toBe(error);
      expect(breaker.snapshot().totals).toMatchObject({ admitted: 1, failures: { total: 1 } });
    });
  });

  describe('a wall-clock step', () => {
    it('back by an hour does not keep an open breaker open: the open period runs on the monotonic reading', async () => {
      const clock = new SteppingClock();
      const breaker = new Breaker(
        'ntp',
        { consecutiveFailures: 1, openDurationMs: 1_000 },
        { clock },
      );
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
      expect(breaker.state).toBe('open');
      clock.stepWall(-3_600_000);
      clock.advance(1_000);
      await expect(breaker.execute(() => 'ok')).resolves.toBe('ok');
      expect(breaker.state).toBe('closed');
    });

    it('forward by an hour does not end the open period early', async () => {
      const clock = new SteppingClock();
      const breaker = new Breaker(
        'ntp',
        { consecutiveFailures: 1, openDurationMs: 1_000 },
        { clock },
      );
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
      clock.stepWall(3_600_000);
      clock.advance(999);
      expect(breaker.state).toBe('open');
      expect(breaker.snapshot().retryAfterMs).toBe(1);
    });

    it('does not stall probe expiry', async () => {
      const clock = new SteppingClock();
      const breaker = new Breaker(
        'ntp',
        { consecutiveFailures: 1, openDurationMs: 1_000, halfOpen: { maxWaitMs: 5_000 } },
        { clock },
      );
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
      clock.advance(1_000);
      const hung = deferred<string>();
      const probe = breaker.execute(() => hung.promise);
      const outcome = expect(probe).rejects.toBeInstanceOf(CallTimeoutError);
      clock.stepWall(-3_600_000);
      clock.advance(5_000);
      expect(breaker.state).toBe('open');
      await outcome;
    });

    it('does not stall a time window: old failures still age out', async () => {
      const clock = new SteppingClock();
      const breaker = new Breaker(
        'ntp',
        {
          window: { type: 'time', durationMs: 10_000, buckets: 10 },
          minimumThroughput: 2,
          failureRateThreshold: 0.5,
        },
        { clock },
      );
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
      clock.stepWall(-3_600_000);
      clock.advance(10_000);
      await breaker.execute(() => Promise.reject(new Error('down again'))).catch(() => undefined);
      // The first failure left the window with time: one failure in the window is below the minimum throughput.
      expect(breaker.snapshot()).toMatchObject({
        state: 'closed',
        window: { calls: 1, failures: 1 },
      });
    });

    it('timestamps shown to people stay wall times after a step', async () => {
      const clock = new SteppingClock(1_700_000_000_000);
      const breaker = new Breaker(
        'ntp',
        { consecutiveFailures: 1, openDurationMs: 1_000 },
        { clock },
      );
      const changes: { at: number; openUntil?: number }[] = [];
      breaker.on('stateChange', (change) => changes.push(change));
      clock.stepWall(-60_000);
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
      expect(changes).toEqual([
        expect.objectContaining({ at: 1_699_999_940_000, openUntil: 1_699_999_941_000 }),
      ]);
      expect(breaker.snapshot()).toMatchObject({
        since: 1_699_999_940_000,
        openUntil: 1_699_999_941_000,
      });
    });

    it('adopts a shared open-until given in wall time', () => {
      const clock = new SteppingClock(1_700_000_000_000);
      const breaker = new Breaker('ntp', {}, { clock });
      clock.stepWall(-3_600_000);
      breaker.adoptOpen(1_700_000_000_000 - 3_600_000 + 2_000);
      expect(breaker.snapshot()).toMatchObject({ state: 'open', retryAfterMs: 2_000 });
      clock.advance(2_000);
      expect(breaker.state).toBe('half-open');
    });
  });

  describe('what a breaker is given besides its options', () => {
    it.each([
      [
        { clock: null },
        'clock must be an object with a now() method returning milliseconds, got null',
      ],
      [
        { clock: new Date() },
        'clock must be an object with a now() method returning milliseconds, got a Date',
      ],
      [
        { clock: new Map() },
        'clock must be an object with a now() method returning milliseconds, got a Map',
      ],
      [
        { clock: Date },
        'clock must be an object with a now() method returning milliseconds, got a function',
      ],
      [
        { clock: { now: (): string => 'soon' } },
        'clock.now() must be a finite number of milliseconds, got "soon"',
      ],
      [
        { clock: { now: () => 1, monotonic: 5 } },
        'clock.monotonic must be a method returning milliseconds, or left out, got 5',
      ],
      [
        { clock: { now: () => 1, monotonic: () => Number.NaN } },
        'clock.monotonic() must be a finite number of milliseconds, got NaN',
      ],
      [{ random: 0.5 }, 'random must be a function returning a number in [0, 1), got 0.5'],
      [{ reportError: 'console' }, 'reportError must be a function, got "console"'],
    ])('%o is refused at construction, naming the breaker', (deps, message) => {
      expect(() => new Breaker('payments', {}, deps as never)).toThrow(
        `Circuit breaker "payments": ${message}.`,
      );
    });

    it('a valid clock and random source build, and the random source is not drawn from by the check', () => {
      let draws = 0;
      const random = () => {
        draws++;
        return 0.25;
      };
      expect(new Breaker('ok', {}, { clock: new SteppingClock(), random }).state).toBe('closed');
      expect(draws).toBe(0);
    });
  });
});
