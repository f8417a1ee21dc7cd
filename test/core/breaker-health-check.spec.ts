import { describe, expect, it, vi } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  HealthCheckScheduler,
  type BreakerOptions,
  type HealthCheckContext,
  type HealthCheckEvent,
  type SchedulerTimers,
  type StateChangeEvent,
} from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { flush } from '../helpers/flush.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** Timers the test fires by hand: how many are armed, and for how long, is all it needs to know. */
class ManualTimers implements SchedulerTimers {
  private readonly pending = new Map<number, { callback: () => void; ms: number }>();
  private seq = 0;
  /** The most ever armed at once. */
  peak = 0;
  created = 0;

  setTimeout(callback: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.created++;
    this.pending.set(id, { callback, ms });
    this.peak = Math.max(this.peak, this.pending.size);
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  get armed(): number[] {
    return [...this.pending.values()].map((timer) => timer.ms);
  }

  /** Fires the one armed timer. */
  fire(): void {
    const [[id, timer]] = [...this.pending];
    this.pending.delete(id!);
    timer!.callback();
  }
}

function setup(healthCheck: BreakerOptions['healthCheck'], options: BreakerOptions = {}) {
  const clock = new ManualClock();
  const timers = new ManualTimers();
  const scheduler = new HealthCheckScheduler({ clock, timers });
  const breaker = new Breaker(
    'payments',
    { consecutiveFailures: 1, openDurationMs: 60_000, timeoutMs: false, healthCheck, ...options },
    { clock, healthCheckScheduler: scheduler },
  );
  const events: HealthCheckEvent[] = [];
  const changes: StateChangeEvent[] = [];
  breaker.on('healthCheck', (event) => events.push(event));
  breaker.on('stateChange', (event) => changes.push(event));
  const open = async () => {
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    expect(breaker.state).toBe('open');
  };
  /** Moves the clock to the armed timer's due time and fires it. */
  const tick = async () => {
    clock.advance(timers.armed[0]!);
    timers.fire();
    await flush();
  };
  return { clock, timers, scheduler, breaker, events, changes, open, tick };
}

describe('Breaker health check (active recovery)', () => {
  it('never runs while closed; while open, a health check every intervalMs; a success moves it to half-open', async () => {
    const fn = vi.fn((_context: HealthCheckContext) => Promise.resolve('healthy'));
    const { timers, scheduler, breaker, events, changes, open, tick } = setup({
      fn,
      intervalMs: 1_000,
    });
    await breaker.execute(() => 'fine');
    expect(scheduler.size).toBe(0);
    expect(timers.armed).toEqual([]);

    await open();
    expect(scheduler.size).toBe(1);
    expect(timers.armed).toEqual([1_000]);
    expect(fn).not.toHaveBeenCalled();
    expect(breaker.snapshot().healthCheck).toEqual({
      nextAt: breaker.clock.now() + 1_000,
      inFlight: false,
    });

    await tick();
    expect(fn).toHaveBeenCalledTimes(1);
    expect(fn.mock.calls[0]![0].signal).toBeInstanceOf(AbortSignal);
    expect(fn.mock.calls[0]![0].key).toBeUndefined();
    expect(breaker.state).toBe('half-open');
    expect(changes.at(-1)).toMatchObject({
      from: 'open',
      to: 'half-open',
      reason: 'health-check',
    });
    expect(events).toEqual([{ result: 'succeeded', durationMs: 0, error: undefined }]);
    // Half-open, live calls decide: nothing more is scheduled, no timer is left.
    expect(scheduler.size).toBe(0);
    expect(timers.armed).toEqual([]);
    expect(breaker.snapshot().healthCheck).toBeUndefined();
    expect(breaker.snapshot().totals.healthChecks).toEqual({ succeeded: 1, failed: 0 });
    expect(await breaker.execute(() => 'probe call')).toBe('probe call');
    expect(breaker.state).toBe('closed');
  });

  it('a failed health check keeps it open and the next comes one interval later; onSuccess: closed closes it', async () => {
    let healthy = false;
    const fn = vi.fn(() =>
      healthy
        ? Promise.resolve({ status: 200, headers: {} })
        : Promise.resolve({ status: 503, headers: {} }),
    );
    const { breaker, events, changes, open, tick, timers } = setup({
      fn,
      intervalMs: 1_000,
      onSuccess: 'closed',
    });
    await open();
    await tick();
    await tick();
    expect(fn).toHaveBeenCalledTimes(2);
    expect(breaker.state).toBe('open');
    expect(events.map((event) => event.result)).toEqual(['failed', 'failed']);
    expect(events[0]!.error).toEqual({ status: 503, headers: {} });
    expect(timers.armed).toEqual([1_000]);
    healthy = true;
    await tick();
    expect(breaker.state).toBe('closed');
    expect(changes.at(-1)).toMatchObject({ from: 'open', to: 'closed', reason: 'health-check' });
    expect(timers.armed).toEqual([]);
    expect(breaker.snapshot().totals.healthChecks).toEqual({ succeeded: 1, failed: 2 });
  });

  it('a hanging health check fails at its own deadline, its signal aborted, and never blocks the next', async () => {
    const signals: AbortSignal[] = [];
    const fn = vi.fn(({ signal }: HealthCheckContext) => {
      signals.push(signal);
      return new Promise(() => undefined);
    });
    const { breaker, events, open, tick, timers } = setup({
      fn,
      intervalMs: 1_000,
      timeoutMs: 300,
    });
    await open();
    await tick();
    expect(fn).toHaveBeenCalledTimes(1);
    expect(breaker.snapshot().healthCheck?.inFlight).toBe(true);
    // Due next: the deadline of the one in flight.
    expect(timers.armed).toEqual([300]);
    await tick();
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[0]!.reason).toBeInstanceOf(CallTimeoutError);
    expect((signals[0]!.reason as Error).message).toBe(
      'Circuit breaker "payments": the health check did not settle within healthCheck.timeoutMs (300 ms) and counts as failed.',
    );
    expect(events).toEqual([{ result: 'failed', durationMs: 300, error: signals[0]!.reason }]);
    expect(timers.armed).toEqual([700]);
    await tick();
    expect(fn).toHaveBeenCalledTimes(2);
    expect(breaker.state).toBe('open');
  });

  it('stops when user traffic closes the breaker, when it is disposed, and a late result changes nothing', async () => {
    const gate = deferred<string>();
    const { breaker, clock, open, tick, timers, scheduler } = setup(
      { fn: () => gate.promise, intervalMs: 1_000, onSuccess: 'closed' },
      { openDurationMs: 1_500 },
    );
    await open();
    await tick();
    expect(breaker.snapshot().healthCheck?.inFlight).toBe(true);
    // The open duration ends; a user's probe closes it first.
    clock.advance(500);
    expect(await breaker.execute(() => 'user probe')).toBe('user probe');
    expect(breaker.state).toBe('closed');
    expect(scheduler.size).toBe(0);
    expect(timers.armed).toEqual([]);
    gate.resolve('late');
    await flush();
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().totals.healthChecks).toEqual({ succeeded: 0, failed: 0 });

    await open();
    expect(scheduler.size).toBe(1);
    breaker.dispose();
    expect(scheduler.size).toBe(0);
    expect(timers.armed).toEqual([]);
  });

  it('a health check that throws synchronously is a failure; reconfigure() adds or removes the health check of an open breaker', async () => {
    const { breaker, events, open, tick, timers } = setup({
      fn: () => {
        throw new Error('no socket');
      },
      intervalMs: 1_000,
    });
    await open();
    await tick();
    expect(events.map((e) => [e.result, (e.error as Error).message])).toEqual([
      ['failed', 'no socket'],
    ]);
    breaker.reconfigure({ consecutiveFailures: 1, openDurationMs: 60_000, timeoutMs: false });
    expect(timers.armed).toEqual([]);
    breaker.reconfigure({
      consecutiveFailures: 1,
      openDurationMs: 60_000,
      timeoutMs: false,
      healthCheck: { fn: () => 'up', intervalMs: 2_000 },
    });
    expect(timers.armed).toEqual([2_000]);
    await tick();
    expect(breaker.state).toBe('half-open');
  });

  it('each child of a per-key family is checked on its own, with its key', async () => {
    const keys: (string | undefined)[] = [];
    const { breaker, tick, scheduler } = setup(
      {
        fn: ({ key }) => {
          keys.push(key);
          return key === 'eu' ? Promise.resolve('up') : Promise.reject(new Error('still down'));
        },
        intervalMs: 1_000,
      },
      { perKey: { maxKeys: 10 } },
    );
    for (const key of ['eu', 'us'])
      await breaker
        .forKey(key)
        .execute(() => Promise.reject(new Error('down')))
        .catch(() => undefined);
    expect(scheduler.size).toBe(2);
    await tick();
    expect(new Set(keys)).toEqual(new Set(['eu', 'us']));
    expect(keys).toHaveLength(2);
    expect(breaker.forKey('eu').state).toBe('half-open');
    expect(breaker.forKey('us').state).toBe('open');
    expect(scheduler.size).toBe(1);
  });

  it('10,000 open breakers share one timer, and their health checks come due in the order they opened', async () => {
    const clock = new ManualClock();
    const timers = new ManualTimers();
    const scheduler = new HealthCheckScheduler({ clock, timers });
    const deps = { clock, healthCheckScheduler: scheduler };
    const order: number[] = [];
    const breakers: Breaker[] = [];
    // Opened 1 ms apart, in a shuffled order of intervals: due times interleave, and the heap must sort them.
    for (let i = 0; i < 10_000; i++) {
      const intervalMs = 5_000 + ((i * 7_919) % 10_000);
      const breaker = new Breaker(
        `b${i}`,
        {
          consecutiveFailures: 1,
          openDurationMs: 3_600_000,
          timeoutMs: false,
          healthCheck: { fn: () => void order.push(i), intervalMs },
        },
        deps,
      );
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
      breakers.push(breaker);
      clock.advance(1);
    }
    expect(scheduler.size).toBe(10_000);
    expect(timers.peak).toBe(1);
    const due = breakers.map((_, i) => 1_000_000 + i + 5_000 + ((i * 7_919) % 10_000));

    // Fire the one timer again and again, each time at the next due time, until every breaker was checked once.
    while (scheduler.size > 0) {
      expect(timers.armed).toHaveLength(1);
      clock.set(scheduler.nextAt!);
      timers.fire();
      expect(timers.peak).toBe(1);
      // The health checks' successes settle in microtasks: the breakers they were for go half-open.
      await Promise.resolve();
      await Promise.resolve();
    }
    await flush();
    // Equal due times may come in either order; distinct ones must be in order.
    expect(new Set(order).size).toBe(10_000);
    const late = order.findIndex((i, k) => k > 0 && due[i]! < due[order[k - 1]!]!);
    expect(late).toBe(-1);
    // Each succeeded: half-open now, nothing scheduled, no timer.
    expect(breakers.every((b) => b.lastDecidedState === 'half-open')).toBe(true);
    expect(scheduler.size).toBe(0);
    expect(timers.armed).toEqual([]);
    expect(timers.created).toBeLessThanOrEqual(10_001);
  });

  it('checks its options, naming the breaker and the option', () => {
    expect(
      () =>
        new Breaker('bad', { healthCheck: { fn: () => 1, intervalMs: 1_000, timeoutMs: 2_000 } }),
    ).toThrow(
      'Circuit breaker "bad": option "healthCheck.timeoutMs" (2000) cannot exceed "healthCheck.intervalMs" (1000): a check would still be pending when the next is due. Lower "healthCheck.timeoutMs" or raise "healthCheck.intervalMs".',
    );
    expect(() => new Breaker('bad', { healthCheck: { intervalMs: 1_000 } as never })).toThrow(
      'Circuit breaker "bad": option "healthCheck.fn" must be a function returning the health check (a Promise), got undefined.',
    );
    expect(() => new Breaker('bad', { healthCheck: { fn: () => 1, intervalMs: 0 } })).toThrow(
      'option "healthCheck.intervalMs" must be a number of milliseconds in [1, 2147483647], got 0.',
    );
    expect(
      () =>
        new Breaker('bad', {
          healthCheck: { fn: () => 1, intervalMs: 10, onSuccess: 'open' as never },
        }),
    ).toThrow(`option "healthCheck.onSuccess" must be 'half-open' or 'closed', got "open".`);
    expect(() => new Breaker('bad', {}, { healthCheckScheduler: {} as never })).toThrow(
      'Circuit breaker "bad": healthCheckScheduler must be a HealthCheckScheduler (new HealthCheckScheduler({ clock }))',
    );
  });
});
