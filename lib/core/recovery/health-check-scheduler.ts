import { monotonicOf, systemClock, type Clock } from '../ports/clock.js';
import { timerDelay } from '../calls/timer-delay.js';

/** Where a scheduler gets its one timer: `setTimeout` by default; a test hands in its own. @publicApi */
export interface SchedulerTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** @publicApi */
export interface HealthCheckSchedulerOptions {
  /** The clock the due times are read on: the breakers' clock. Default: `systemClock`. */
  clock?: Clock;
  /** Default: the clock's own `setTimer()` when it has one, else the global `setTimeout` (unref'd) and `clearTimeout`. */
  timers?: SchedulerTimers;
}

/** Something due at a time of the scheduler's clock (a breaker's health check). @internal */
export interface ScheduledTask {
  /** When it is due. */
  at: number;
  /** Its place in the heap, -1 when not scheduled. */
  index: number;
  /** Runs it (it may schedule itself again). It should not throw. */
  run(now: number): void;
  /** `run()` threw: the task reports it and schedules itself again; the other due tasks run regardless. */
  failed(error: unknown, now: number): void;
}

const DEFAULT_TIMERS: SchedulerTimers = {
  setTimeout(callback, ms) {
    const timer = setTimeout(callback, ms);
    // A health check must never be the reason a process stays alive.
    timer.unref?.();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** One due task: whatever it throws stays with it, and never keeps the others from running. */
function runIsolated(task: ScheduledTask, now: number): void {
  try {
    task.run(now);
  } catch (error) {
    try {
      task.failed(error, now);
    } catch {
      // Its report failed too: nothing is left to tell, and the scheduler's turn must go on.
    }
  }
}

/**
 * A clock with a timer of its own (`ManualClock` of the testing kit) arms the
 * scheduler's one timer too, as it arms the per-call deadlines: health checks are
 * then due when the test moves the clock, not when real time passes.
 */
function clockTimers(clock: Clock | undefined): SchedulerTimers | undefined {
  if (typeof clock?.setTimer !== 'function') return undefined;
  return {
    setTimeout: (callback, ms) => clock.setTimer!(callback, ms),
    clearTimeout: (cancel) => (cancel as () => void)(),
  };
}

/**
 * The one timer behind every active health check (`healthCheck` option) of the
 * breakers that share it: one per registry under Nest, one per `deps` object
 * (its clock) in the engine, or the one you pass as `deps.healthCheckScheduler`.
 * Due checks wait in a binary heap ordered by due time; one timer is armed
 * for the earliest, and none at all while no breaker is open. Breakers
 * themselves still hold no timer.
 *
 * @publicApi
 */
export class HealthCheckScheduler {
  private readonly heap: ScheduledTask[] = [];
  private readonly monotonic: () => number;
  private readonly timers: SchedulerTimers;
  private timer: unknown = undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private firing = false;

  constructor(options: HealthCheckSchedulerOptions = {}) {
    this.monotonic = monotonicOf(options.clock ?? systemClock);
    this.timers = options.timers ?? clockTimers(options.clock) ?? DEFAULT_TIMERS;
  }

  /** How many health checks are scheduled (one per open breaker that has a `healthCheck`). */
  get size(): number {
    return this.heap.length;
  }

  /** Whether the scheduler's timer is armed: never while nothing is scheduled. */
  get armed(): boolean {
    return this.timer !== undefined;
  }

  /** When the next health check is due on the clock, if any. */
  get nextAt(): number | undefined {
    return this.heap[0]?.at;
  }

  /** Forgets every task and disarms the timer (the registry's shutdown). */
  stop(): void {
    for (const task of this.heap) task.index = -1;
    this.heap.length = 0;
    this.disarm();
  }

  /** @internal Schedules `task` at `at`, or moves it there. */
  schedule(task: ScheduledTask, at: number): void {
    task.at = at;
    if (task.index === -1) {
      task.index = this.heap.length;
      this.heap.push(task);
      this.up(task.index);
    } else {
      this.up(task.index);
      this.down(task.index);
    }
    this.rearm();
  }

  /** @internal */
  cancel(task: ScheduledTask): void {
    const index = task.index;
    if (index === -1) return;
    task.index = -1;
    const last = this.heap.pop()!;
    if (last !== task) {
      this.heap[index] = last;
      last.index = index;
      this.up(index);
      this.down(index);
    }
    this.rearm();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.monotonic();
    // Taken out first, then run: a task that schedules itself again at `now` must wait for the next turn.
    const due: ScheduledTask[] = [];
    while (this.heap.length > 0 && this.heap[0]!.at <= now) {
      const task = this.heap[0]!;
      this.cancelTop();
      due.push(task);
    }
    this.firing = true;
    try {
      for (const task of due) runIsolated(task, now);
    } finally {
      this.firing = false;
      this.rearm();
    }
  };

  private cancelTop(): void {
    const top = this.heap[0]!;
    top.index = -1;
    const last = this.heap.pop()!;
    if (last !== top) {
      this.heap[0] = last;
      last.index = 0;
      this.down(0);
    }
  }

  private rearm(): void {
    if (this.firing) return;
    const next = this.heap[0];
    if (next === undefined) {
      this.disarm();
      return;
    }
    if (this.timer !== undefined && this.timerAt === next.at) return;
    this.disarm();
    this.timerAt = next.at;
    this.timer = this.timers.setTimeout(this.fire, timerDelay(next.at - this.monotonic()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private up(index: number): void {
    const heap = this.heap;
    const task = heap[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.at <= task.at) break;
      heap[index] = heap[parent]!;
      heap[index]!.index = index;
      index = parent;
    }
    heap[index] = task;
    task.index = index;
  }

  private down(index: number): void {
    const heap = this.heap;
    const task = heap[index]!;
    const size = heap.length;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= size) break;
      if (child + 1 < size && heap[child + 1]!.at < heap[child]!.at) child++;
      if (heap[child]!.at >= task.at) break;
      heap[index] = heap[child]!;
      heap[index]!.index = index;
      index = child;
    }
    heap[index] = task;
    task.index = index;
  }
}
