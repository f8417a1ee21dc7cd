import { describe, expect, it } from 'vitest';
import { DeadlineScheduler, type Deadline } from '../../lib/core/calls/deadline-scheduler.js';
import {
  HealthCheckScheduler,
  type ScheduledTask,
} from '../../lib/core/recovery/health-check-scheduler.js';
import { MAX_TIMER_MS, timerDelay } from '../../lib/core/calls/timer-delay.js';
import { ManualClock } from '../helpers/manual-clock.js';

// setTimeout fires after 1 ms for a delay above 2^31 - 1 (with a TimeoutOverflowWarning): a timer armed with one
// would fire, find nothing due, and arm again, every millisecond. Every timer of the package goes through timerDelay.

describe('timerDelay', () => {
  it('keeps a delay a timer can wait, cuts a longer one to 2^31 - 1 ms, and reads a negative or NaN one as 0', () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    expect([0, 1, 1.5, 60_000, MAX_TIMER_MS].map(timerDelay)).toEqual([
      0,
      1,
      1.5,
      60_000,
      MAX_TIMER_MS,
    ]);
    expect([MAX_TIMER_MS + 1, 2 ** 32, 1e300, Number.POSITIVE_INFINITY].map(timerDelay)).toEqual([
      MAX_TIMER_MS,
      MAX_TIMER_MS,
      MAX_TIMER_MS,
      MAX_TIMER_MS,
    ]);
    expect([-1, -1e300, Number.NEGATIVE_INFINITY, Number.NaN].map(timerDelay)).toEqual([
      0, 0, 0, 0,
    ]);
  });

  it('the probe scheduler arms its timer port with at most 2^31 - 1 ms, and again when it fires early', () => {
    const clock = new ManualClock(0);
    const armed: number[] = [];
    let fire: (() => void) | undefined;
    const scheduler = new HealthCheckScheduler({
      clock,
      timers: {
        setTimeout: (callback, ms) => {
          armed.push(ms);
          fire = callback;
          return armed.length;
        },
        clearTimeout: () => undefined,
      },
    });
    const runs: number[] = [];
    const task: ScheduledTask = {
      at: 0,
      index: -1,
      run: (now) => runs.push(now),
      failed: (error) => {
        throw error;
      },
    };
    scheduler.schedule(task, 3 * MAX_TIMER_MS);
    expect(armed).toEqual([MAX_TIMER_MS]);
    clock.advance(MAX_TIMER_MS);
    fire!();
    expect(runs).toEqual([]);
    expect(armed).toEqual([MAX_TIMER_MS, MAX_TIMER_MS]);
  });

  it('the deadline scheduler arms a clock timer with at most 2^31 - 1 ms', () => {
    const clock = new ManualClock(0);
    const armed: number[] = [];
    const scheduler = new DeadlineScheduler({
      monotonic: () => clock.now(),
      setTimer: (_callback, delayMs) => {
        armed.push(delayMs);
        return () => undefined;
      },
    });
    const deadline: Deadline = {
      dueAt: 0,
      prev: undefined,
      next: undefined,
      queue: undefined,
      expire: () => undefined,
    };
    scheduler.add(deadline, 2 ** 32);
    expect(armed).toEqual([MAX_TIMER_MS]);
  });
});
