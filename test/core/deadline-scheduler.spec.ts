import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineScheduler, type Deadline } from '../../lib/core/deadline-scheduler.js';

function deadline(name: string, expired: string[]): Deadline {
  return {
    dueAt: 0,
    prev: undefined,
    next: undefined,
    queue: undefined,
    expire: () => expired.push(name),
  };
}

describe('DeadlineScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('expires each deadline at its time, across timeouts, with one timer', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    scheduler.add(deadline('a@100', expired), 100);
    vi.advanceTimersByTime(10);
    scheduler.add(deadline('b@60', expired), 50);
    scheduler.add(deadline('c@110', expired), 100);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(49);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['b@60']);
    vi.advanceTimersByTime(39);
    expect(expired).toEqual(['b@60']);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['b@60', 'a@100']);
    vi.advanceTimersByTime(10);
    expect(expired).toEqual(['b@60', 'a@100', 'c@110']);
    // Nothing waits: no timer is armed again.
    expect(scheduler.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a removed deadline never expires; the timer is left to fire once with nothing to do, then goes', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    const first = deadline('first', expired);
    const middle = deadline('middle', expired);
    const last = deadline('last', expired);
    scheduler.add(first, 100);
    scheduler.add(middle, 100);
    scheduler.add(last, 100);
    scheduler.remove(middle);
    scheduler.remove(first);
    vi.advanceTimersByTime(100);
    expect(expired).toEqual(['last']);
    scheduler.add(first, 100);
    scheduler.remove(first);
    // Removing twice is harmless.
    scheduler.remove(first);
    expect(scheduler.size).toBe(0);
    // Calls made one after another do not pay for a timer each: the one armed stays until it fires, idle.
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(expired).toEqual(['last']);
  });

  it('an expiry that adds a deadline is scheduled too', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    const chained: Deadline = {
      ...deadline('x', expired),
      expire: () => {
        expired.push('first');
        scheduler.add(deadline('second', expired), 30);
      },
    };
    scheduler.add(chained, 20);
    vi.advanceTimersByTime(20);
    expect(expired).toEqual(['first']);
    vi.advanceTimersByTime(30);
    expect(expired).toEqual(['first', 'second']);
  });

  it('one timer serves calls made one after another', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      const d = deadline(`call-${i}`, expired);
      scheduler.add(d, 10_000);
      scheduler.remove(d);
      vi.advanceTimersByTime(1);
    }
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(expired).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('re-arms a timer that is overdue, as one armed under another time base would be', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    scheduler.add(deadline('before', expired), 50);
    // Fake timers replaced: the timer armed before never fires in this time base.
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'], now: 0 });
    vi.advanceTimersByTime(100);
    scheduler.add(deadline('after', expired), 20);
    vi.advanceTimersByTime(20);
    expect(expired).toEqual(['before', 'after']);
  });
});
