import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/testing/manual-clock.js';

const START = 1_767_225_600_000;

describe('ManualClock', () => {
  it('starts at 2026-01-01T00:00:00Z by default, with both readings together', () => {
    const clock = new ManualClock();
    expect([clock.now(), clock.monotonic()]).toEqual([START, START]);
    expect(new Date(clock.now()).toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(new ManualClock(5).now()).toBe(5);
  });

  it('advance() runs every timer that falls due, in due order (then the order set), each at its own time', () => {
    const clock = new ManualClock(0);
    const ran: string[] = [];
    clock.setTimer(() => ran.push(`b@${clock.monotonic()}`), 200);
    clock.setTimer(() => ran.push(`a@${clock.monotonic()}`), 100);
    clock.setTimer(() => ran.push(`c@${clock.monotonic()}`), 200);
    // A timer set by a timer runs in the same advance when it falls due within it.
    clock.setTimer(() => clock.setTimer(() => ran.push(`d@${clock.monotonic()}`), 50), 120);
    const cancelled = clock.setTimer(() => ran.push('never'), 150);
    cancelled();
    expect(clock.pendingTimers).toBe(4);
    clock.advance(99);
    expect(ran).toEqual([]);
    clock.advance(201);
    expect(ran).toEqual(['a@100', 'd@170', 'b@200', 'c@200']);
    expect([clock.monotonic(), clock.now(), clock.pendingTimers]).toEqual([300, 300, 0]);
  });

  it('advanceToNextTimer() moves to the next timer and says how far; 0 with none', () => {
    const clock = new ManualClock(0);
    let ran = 0;
    clock.setTimer(() => ran++, 250);
    expect(clock.advanceToNextTimer()).toBe(250);
    expect([ran, clock.monotonic(), clock.advanceToNextTimer()]).toEqual([1, 250, 0]);
  });

  it('advanceAsync() lets promise callbacks run after each timer', async () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    clock.setTimer(() => {
      void Promise.resolve().then(() => {
        seen.push(`then@${clock.monotonic()}`);
        clock.setTimer(() => seen.push(`timer@${clock.monotonic()}`), 10);
      });
    }, 100);
    await clock.advanceAsync(200);
    expect(seen).toEqual(['then@100', 'timer@110']);
  });

  it('jump() steps wall time only; onAdvance() hears every move; bad steps are refused', () => {
    const clock = new ManualClock(0);
    const moves: number[] = [];
    const off = clock.onAdvance((now) => moves.push(now));
    clock.setTimer(() => moves.push(-1), 100);
    clock.jump(-3_600_000);
    expect([clock.now(), clock.monotonic(), clock.pendingTimers]).toEqual([-3_600_000, 0, 1]);
    clock.advance(100);
    off();
    clock.advance(5);
    expect(moves).toEqual([100, -1]);
    expect(() => clock.advance(-1)).toThrow(
      'ManualClock: advance(ms) must be a finite number of milliseconds, 0 or more, got -1.',
    );
    expect(() => clock.jump(Number.NaN)).toThrow(
      'ManualClock: jump(ms) must be a finite number of milliseconds, got NaN.',
    );
  });

  it('whenTimerPending() resolves at once or when a timer is set, and rejects after its real-time timeout', async () => {
    const clock = new ManualClock(0);
    const waiting = clock.whenTimerPending();
    clock.setTimer(() => undefined, 10);
    await waiting;
    await clock.whenTimerPending();
    clock.advance(10);
    await expect(clock.whenTimerPending({ timeoutMs: 10 })).rejects.toThrow(
      'ManualClock: no timer was set within 10 ms of real time: nothing waits on a deadline or an injected latency.',
    );
  });
});
