import type { Clock } from '../core/index.js';
import { timerDelay } from '../core/calls/timer-delay.js';
import { testingMessages } from './circuit-breaker-testing.messages.js';

interface Timer {
  readonly dueAt: number;
  readonly seq: number;
  readonly callback: () => void;
}

/** 2026-01-01T00:00:00.000Z: a fixed start, so that times in snapshots and events are the same in every run. */
const DEFAULT_START = 1_767_225_600_000;

/**
 * A clock that moves only when the test says so, for every time source of the
 * breakers: wall time (`now()`), the monotonic reading durations run on, and
 * the timers of per-call deadlines, bulkhead queue timeouts and injected
 * latency (`setTimer()`). A test
 * opens a breaker, waits out its open duration and watches a probe time out
 * in microseconds, without a sleep.
 *
 * `advance(ms)` runs every timer that falls due, in order, each at its own
 * time; `advanceAsync(ms)` also lets promise callbacks run between timers, as
 * real time would (a call that resolves after its injected latency, before
 * its deadline).
 *
 * @publicApi
 */
export class ManualClock implements Clock {
  private wall: number;
  private mono: number;
  private timers: Timer[] = [];
  private seq = 0;
  private readonly advanceListeners = new Set<(now: number) => void>();
  private readonly timerWaiters = new Set<() => void>();

  /** `start`: the wall time it reads first, in ms since the epoch. Default 2026-01-01T00:00:00Z. */
  constructor(start: number = DEFAULT_START) {
    if (!Number.isFinite(start)) throw new TypeError(testingMessages.badClockTime('start', start));
    this.wall = start;
    this.mono = start;
  }

  now(): number {
    return this.wall;
  }

  monotonic(): number {
    return this.mono;
  }

  setTimer(callback: () => void, delayMs: number): () => void {
    const timer: Timer = {
      dueAt: this.mono + Math.max(0, delayMs),
      seq: this.seq++,
      callback,
    };
    // Kept sorted: due time, then the order they were set in.
    let i = this.timers.length;
    while (i > 0 && this.timers[i - 1]!.dueAt > timer.dueAt) i--;
    this.timers.splice(i, 0, timer);
    for (const wake of this.timerWaiters) wake();
    return () => {
      const at = this.timers.indexOf(timer);
      if (at !== -1) this.timers.splice(at, 1);
    };
  }

  /** How many timers wait (per-call deadlines share one; each injected latency has its own). */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running each timer that falls due at its own time. */
  advance(ms: number): void {
    const target = this.mono + this.checkStep(ms);
    for (let timer = this.dueBy(target); timer !== undefined; timer = this.dueBy(target)) {
      this.moveTo(timer.dueAt);
      timer.callback();
    }
    this.moveTo(target);
  }

  /** `advance(ms)`, letting promise callbacks run after each timer, as they would in real time. */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.mono + this.checkStep(ms);
    await settle();
    for (let timer = this.dueBy(target); timer !== undefined; timer = this.dueBy(target)) {
      this.moveTo(timer.dueAt);
      timer.callback();
      await settle();
    }
    this.moveTo(target);
    await settle();
  }

  /** Moves time to the next timer and runs it (and any due at the same time); returns how far time moved, 0 with none. */
  advanceToNextTimer(): number {
    const next = this.timers[0];
    if (next === undefined) return 0;
    const step = next.dueAt - this.mono;
    this.advance(step);
    return step;
  }

  /** Steps wall time only, as an NTP correction does: durations, deadlines and timers do not move. */
  jump(ms: number): void {
    if (!Number.isFinite(ms)) throw new TypeError(testingMessages.badClockTime('jump(ms)', ms));
    this.wall += ms;
  }

  /**
   * Resolves once a timer waits on this clock (at once if one does): a call
   * started elsewhere (an HTTP request) has reached its deadline or its
   * injected latency, and `advance()` will move it. Rejects after `timeoutMs`
   * of real time (default 5 s), so that a test never hangs.
   */
  whenTimerPending(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.timers.length > 0) return Promise.resolve();
    const timeoutMs = options.timeoutMs ?? 5_000;
    return new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        this.timerWaiters.delete(wake);
        clearTimeout(guard);
        resolve();
      };
      const guard = setTimeout(() => {
        this.timerWaiters.delete(wake);
        reject(new Error(testingMessages.noTimer(timeoutMs)));
      }, timerDelay(timeoutMs));
      this.timerWaiters.add(wake);
    });
  }

  /** Calls `listener` with the monotonic time after every move of the clock; returns the function that stops it. */
  onAdvance(listener: (now: number) => void): () => void {
    this.advanceListeners.add(listener);
    return () => this.advanceListeners.delete(listener);
  }

  private checkStep(ms: number): number {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      throw new TypeError(testingMessages.badClockTime('advance(ms)', ms));
    return ms;
  }

  private dueBy(target: number): Timer | undefined {
    const first = this.timers[0];
    if (first === undefined || first.dueAt > target) return undefined;
    this.timers.shift();
    return first;
  }

  private moveTo(mono: number): void {
    if (mono <= this.mono) return;
    this.wall += mono - this.mono;
    this.mono = mono;
    for (const listener of this.advanceListeners) listener(mono);
  }
}

/** Lets every promise callback queued so far run (a macrotask turn: microtasks queued by microtasks included). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
