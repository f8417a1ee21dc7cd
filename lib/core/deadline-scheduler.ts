import { timerDelay } from './timer-delay.js';

/**
 * A call with a deadline, as the scheduler keeps it: linked into the queue of
 * its timeout so that settling it unlinks it in O(1).
 *
 * @internal
 */
export interface Deadline {
  dueAt: number;
  prev: Deadline | undefined;
  next: Deadline | undefined;
  queue: DeadlineQueue | undefined;
  /** The deadline passed before the call settled. */
  expire(): void;
}

/** The calls of one timeout value, oldest first: with one timeout, the first due is always the first added. @internal */
export class DeadlineQueue {
  head: Deadline | undefined = undefined;
  tail: Deadline | undefined = undefined;

  constructor(readonly timeoutMs: number) {}
}

/** What a scheduler that does not run on the process's timers runs on: a clock with timers of its own. @internal */
export interface TimerSource {
  monotonic(): number;
  setTimer(callback: () => void, delayMs: number): () => void;
}

/**
 * Every deadline of every breaker in the process, behind one timer.
 *
 * A timer per call costs about a microsecond to create and clear, and most
 * calls settle long before their deadline. Here a call is appended to the
 * queue of its timeout (due times in one queue only grow, so no sorting), and
 * unlinked when it settles; one unref'd timer is armed for the earliest head.
 * It is not cleared when the last call settles: calls made one after another
 * would each pay for a timer again. It fires at most once per timeout with
 * nothing to do, and re-arms only while calls wait. Time comes from
 * `performance.now()`, the monotonic reading timers run on (and the one fake
 * timers move).
 *
 * With a `source` (a clock that has timers, such as a test's manual clock),
 * the same queues run on that clock instead: its breakers' deadlines move
 * when the test moves time. Such a timer costs nothing to cancel, so it is
 * cancelled as soon as nothing waits, and a test that asks whether anything
 * waits on its clock gets a true answer.
 *
 * @internal
 */
export class DeadlineScheduler {
  private readonly queues = new Map<number, DeadlineQueue>();
  private waiting = 0;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private cancelTimer: (() => void) | undefined = undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly source?: TimerSource) {}

  private now(): number {
    return this.source === undefined ? performance.now() : this.source.monotonic();
  }

  /** Calls `deadline.expire()` in `timeoutMs`, unless `remove(deadline)` comes first. */
  add(deadline: Deadline, timeoutMs: number): void {
    const now = this.now();
    const dueAt = now + timeoutMs;
    let queue = this.queues.get(timeoutMs);
    if (queue === undefined) {
      queue = new DeadlineQueue(timeoutMs);
      this.queues.set(timeoutMs, queue);
    }
    deadline.dueAt = dueAt;
    deadline.queue = queue;
    deadline.next = undefined;
    deadline.prev = queue.tail;
    if (queue.tail === undefined) queue.head = deadline;
    else queue.tail.next = deadline;
    queue.tail = deadline;
    this.waiting++;
    // An overdue timer is re-armed too: one armed under another time base (fake timers in tests) would never fire.
    if (dueAt < this.timerAt || this.timerAt < now) this.arm(dueAt, now);
  }

  remove(deadline: Deadline): void {
    const queue = deadline.queue;
    if (queue === undefined) return;
    this.unlink(queue, deadline);
    if (this.waiting === 0 && this.cancelTimer !== undefined) this.disarm();
  }

  /** How many calls wait for their deadline (for tests and diagnostics). */
  get size(): number {
    return this.waiting;
  }

  private unlink(queue: DeadlineQueue, deadline: Deadline): void {
    const { prev, next } = deadline;
    if (prev === undefined) queue.head = next;
    else prev.next = next;
    if (next === undefined) queue.tail = prev;
    else next.prev = prev;
    deadline.prev = deadline.next = deadline.queue = undefined;
    this.waiting--;
  }

  private arm(dueAt: number, now: number): void {
    this.timerAt = dueAt;
    const source = this.source;
    if (source !== undefined) {
      this.cancelTimer?.();
      this.cancelTimer = source.setTimer(this.fire, timerDelay(dueAt - now));
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(this.fire, timerDelay(dueAt - now));
    // A deadline must never be the reason a process stays alive.
    this.timer.unref?.();
  }

  private disarm(): void {
    this.cancelTimer!();
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    const due: Deadline[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const queue of this.queues.values()) {
      let head = queue.head;
      while (head !== undefined && head.dueAt <= now) {
        this.unlink(queue, head);
        due.push(head);
        head = queue.head;
      }
      if (head !== undefined && head.dueAt < next) next = head.dueAt;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next, now);
    // Expired after the bookkeeping: an expiry may settle other calls, or start new ones.
    for (const deadline of due) deadline.expire();
  };
}

/** The one scheduler of the process: deadlines are real time, whatever clock a breaker reads (unless it has timers). @internal */
export const deadlines = new DeadlineScheduler();

const clockSchedulers = new WeakMap<object, DeadlineScheduler>();

/**
 * The scheduler of a clock's breakers: the process's for a clock without
 * timers, otherwise one per clock (every breaker of one manual clock shares it).
 *
 * @internal
 */
export function deadlinesOf(clock: {
  monotonic?(): number;
  now(): number;
  setTimer?(callback: () => void, delayMs: number): () => void;
}): DeadlineScheduler {
  if (typeof clock.setTimer !== 'function') return deadlines;
  let scheduler = clockSchedulers.get(clock);
  if (scheduler === undefined) {
    const monotonic =
      typeof clock.monotonic === 'function' ? () => clock.monotonic!() : () => clock.now();
    scheduler = new DeadlineScheduler({
      monotonic,
      setTimer: (callback, delayMs) => clock.setTimer!(callback, delayMs),
    });
    clockSchedulers.set(clock, scheduler);
  }
  return scheduler;
}
