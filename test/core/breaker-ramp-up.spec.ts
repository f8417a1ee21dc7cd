import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CallRejectedError,
  type BreakerOptions,
  type RejectedEvent,
} from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

const boom = () => Promise.reject(new Error('boom'));
const ok = () => Promise.resolve('ok');

/** A breaker that has just recovered: opened by one failure, closed by one probe after the open duration. */
async function recovered(clock: ManualClock, options: BreakerOptions = {}) {
  const breaker = new Breaker(
    'catalog',
    {
      consecutiveFailures: 1,
      openDurationMs: 1_000,
      timeoutMs: false,
      rampUp: { durationMs: 10_000, initialRatio: 0.25 },
      ...options,
    },
    { clock },
  );
  await breaker.execute(boom).catch(() => undefined);
  clock.advance(1_000);
  expect(await breaker.execute(ok)).toBe('ok');
  expect(breaker.state).toBe('closed');
  return breaker;
}

/** Makes `n` calls at once; returns which were admitted (true) and the rejections. */
async function burst(breaker: Breaker, n: number) {
  const admitted: boolean[] = [];
  const rejections: CallRejectedError[] = [];
  for (let i = 0; i < n; i++) {
    try {
      await breaker.execute(ok);
      admitted.push(true);
    } catch (error) {
      admitted.push(false);
      rejections.push(error as CallRejectedError);
    }
  }
  return { admitted, rejections };
}

describe('Breaker rampUp (slow start after closing)', () => {
  it('admits a share growing from initialRatio to all calls over durationMs, rejecting the rest as ramp-up', async () => {
    const clock = new ManualClock();
    const breaker = await recovered(clock);
    const rejected: RejectedEvent[] = [];
    breaker.on('rejected', (event) => rejected.push(event));
    expect(breaker.snapshot().rampUp).toEqual({ ratio: 0.25, until: clock.now() + 10_000 });

    // The first call after closing passes; then a quarter of a call's credit builds up per call.
    const start = await burst(breaker, 20);
    expect(start.admitted.filter(Boolean)).toHaveLength(6);
    expect(start.admitted.slice(0, 8)).toEqual([
      true,
      false,
      false,
      true,
      false,
      false,
      false,
      true,
    ]);
    expect(start.rejections[0]).toMatchObject({
      reason: 'ramp-up',
      code: 'CIRCUIT_OPEN',
      state: 'closed',
      retryAfterMs: 1_000,
    });
    expect(start.rejections[0]!.message).toBe(
      'Circuit breaker "catalog" rejected the call: the circuit has just closed and admits a growing share of calls.',
    );
    expect(rejected).toHaveLength(14);

    // Halfway: 0.25 + 0.75 / 2 = 0.625 of the calls.
    clock.advance(5_000);
    expect(breaker.snapshot().rampUp?.ratio).toBe(0.625);
    const middle = await burst(breaker, 8);
    expect(middle.admitted).toEqual([false, true, false, true, true, false, true, true]);

    // Near the end (0.97 of the calls), the hint is the rest of the ramp.
    clock.advance(4_600);
    const late = await burst(breaker, 4);
    expect(late.admitted).toEqual([false, true, true, true]);
    expect(late.rejections.map((error) => error.retryAfterMs)).toEqual([400]);

    clock.advance(400);
    expect(breaker.snapshot().rampUp).toBeUndefined();
    const after = await burst(breaker, 10);
    expect(after.admitted).toEqual(Array.from({ length: 10 }, () => true));
    expect(breaker.snapshot().totals).toMatchObject({
      rejected: { 'ramp-up': rejected.length, total: rejected.length },
      failures: { total: 1 },
    });
  });

  it('reopens at once on a failure rate at the threshold during the ramp, without waiting for minimumThroughput', async () => {
    const clock = new ManualClock();
    // The rate rule alone: 50 % over at least 20 calls, which a ramp at a quarter would take long to gather.
    const breaker = new Breaker(
      'rated',
      {
        failureRateThreshold: 0.5,
        minimumThroughput: 20,
        window: { type: 'count', size: 20 },
        openDurationMs: 1_000,
        timeoutMs: false,
        rampUp: { durationMs: 10_000, initialRatio: 1 },
      },
      { clock },
    );
    for (let i = 0; i < 20; i++) await breaker.execute(boom).catch(() => undefined);
    expect(breaker.state).toBe('open');
    clock.advance(1_000);
    await breaker.execute(ok);
    expect(breaker.state).toBe('closed');
    // One success, then a failure: 1 of 2 calls failed, 0.5 >= 0.5.
    await breaker.execute(ok);
    await breaker.execute(boom).catch(() => undefined);
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({
      from: 'closed',
      to: 'open',
      reason: 'failure-rate',
      window: { calls: 2, failures: 1 },
    });
    expect(breaker.snapshot().rampUp).toBeUndefined();
  });

  it('a ramp that fails reopens with the grown open duration of a failed probe', async () => {
    const clock = new ManualClock();
    const breaker = await recovered(clock, { backoff: { multiplier: 2 } });
    expect(breaker.snapshot().thresholds.nextOpenDurationMs).toBe(1_000);
    await breaker.execute(boom).catch(() => undefined);
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().openUntil).toBe(clock.now() + 2_000);
  });

  it("adopting the fleet's close ramps from the fleet's close time, never before its own opening nor in the future", async () => {
    const clock = new ManualClock();
    const options = {
      consecutiveFailures: 1,
      openDurationMs: 60_000,
      timeoutMs: false as const,
      rampUp: { durationMs: 10_000, initialRatio: 0.25 },
    };
    const breaker = new Breaker('fleet', options, { clock });
    await breaker.execute(boom).catch(() => undefined);
    const openedAt = clock.now();
    clock.advance(5_000);
    breaker.adoptClosed(clock.now() - 4_000);
    expect(breaker.snapshot()).toMatchObject({
      state: 'closed',
      since: clock.now() - 4_000,
      rampUp: { ratio: 0.25 + 0.75 * 0.4, until: clock.now() + 6_000 },
      lastTransition: { reason: 'shared-close' },
    });

    const early = new Breaker('early', options, { clock });
    await early.execute(boom).catch(() => undefined);
    clock.advance(1_000);
    early.adoptClosed(openedAt - 1);
    expect(early.snapshot().since).toBe(clock.now() - 1_000);
    const late = new Breaker('late', options, { clock });
    await late.execute(boom).catch(() => undefined);
    late.adoptClosed(clock.now() + 5_000);
    expect(late.snapshot().rampUp).toEqual({ ratio: 0.25, until: clock.now() + 10_000 });
  });

  it('does not ramp a new breaker, after reset(), or after a force is released: only a recovery ramps', async () => {
    const clock = new ManualClock();
    const fresh = new Breaker(
      'fresh',
      { timeoutMs: false, rampUp: { durationMs: 10_000 } },
      { clock },
    );
    expect((await burst(fresh, 5)).admitted).toEqual([true, true, true, true, true]);
    fresh.isolate();
    fresh.reset();
    expect((await burst(fresh, 5)).admitted).toEqual([true, true, true, true, true]);
    fresh.force('open', { reason: 'maintenance' });
    fresh.release();
    expect(fresh.snapshot().rampUp).toBeUndefined();
    expect((await burst(fresh, 5)).admitted).toEqual([true, true, true, true, true]);
  });

  it('starts only once halfOpen.successesToClose probes have succeeded', async () => {
    const clock = new ManualClock();
    const b = new Breaker(
      'three',
      {
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        timeoutMs: false,
        halfOpen: { maxProbes: 3, maxConcurrent: 3, successesToClose: 3 },
        rampUp: { durationMs: 10_000, initialRatio: 0.25 },
      },
      { clock },
    );
    await b.execute(boom).catch(() => undefined);
    clock.advance(1_000);
    await b.execute(ok);
    await b.execute(ok);
    expect(b.state).toBe('half-open');
    expect(b.snapshot().rampUp).toBeUndefined();
    await b.execute(ok);
    expect(b.state).toBe('closed');
    expect(b.snapshot().rampUp).toEqual({ ratio: 0.25, until: clock.now() + 10_000 });
  });

  it('acquire() and the decorator path are ramped too; reconfigure() without rampUp ends the ramp', async () => {
    const clock = new ManualClock();
    const breaker = await recovered(clock);
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      try {
        breaker.acquire().succeed('ok');
        outcomes.push('admitted');
      } catch (error) {
        outcomes.push((error as CallRejectedError).reason);
      }
    }
    expect(outcomes).toEqual(['admitted', 'ramp-up', 'ramp-up', 'admitted']);
    await expect(
      breaker.executeMethod(
        async () => 'm',
        undefined,
        [],
        () => Promise.resolve('m'),
      ),
    ).rejects.toMatchObject({ reason: 'ramp-up' });
    breaker.reconfigure({ consecutiveFailures: 1, openDurationMs: 1_000, timeoutMs: false });
    expect(breaker.snapshot().rampUp).toBeUndefined();
    expect((await burst(breaker, 3)).admitted).toEqual([true, true, true]);
  });

  it('checks its options, naming the breaker and the option', () => {
    expect(() => new Breaker('bad', { rampUp: { durationMs: 0 } })).toThrow(
      'Circuit breaker "bad": option "rampUp.durationMs" must be a positive, finite number of milliseconds, got 0.',
    );
    expect(() => new Breaker('bad', { rampUp: { durationMs: 1_000, initialRatio: 0 } })).toThrow(
      'Circuit breaker "bad": option "rampUp.initialRatio" must be a number in (0, 1], got 0.',
    );
    expect(() => new Breaker('bad', { rampUp: { durationMs: 1_000, from: 0.1 } as never })).toThrow(
      'unknown option "rampUp.from"',
    );
    expect(new Breaker('ok', { rampUp: { durationMs: 5_000 } }).config.rampUp).toEqual({
      durationMs: 5_000,
      initialRatio: 0.1,
    });
  });
});
