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

/**
 * The calls of one timeout value, oldest first: with one timeout, the first due
 * is always the first added. The calls from `unstamped` on (the newest) have no
 * due time yet (see `DeadlineScheduler`).
 *
 * @internal
 */
export class DeadlineQueue {
  head: Deadline | undefined = undefined;
  tail: Deadline | undefined = undefined;
  unstamped: Deadline | undefined = undefined;

  constructor(readonly timeoutMs: number) {}
}

/**
 * How many calls within a millisecond make a stamp cheaper than reading the
 * clock for each. A clock reading costs tens of nanoseconds (more where it is
 * a system call); a zero-delay timer a millisecond costs more than that in
 * itself, and far more in a process that waits for I/O: the loop wakes up
 * for it. Calls to a network dependency rarely come faster than this; calls
 * in a tight loop do.
 */
const DENSE_CALLS = 32;

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
 * A call reads the clock as it is added, unless calls come densely (32 or
 * more within a millisecond): then reading it costs more than the rest of the
 * scheduler's work for a call (it is a system call on many virtual machines).
 * A dense call is queued without a due time, and a zero-delay timer, armed by
 * the first such call and shared by all that come before it fires, reads the
 * clock once and gives each call still waiting its due time from that reading.
 * A call that settles first (most do) never gets one. Its due time is thus
 * never earlier than its start plus its timeout, and later by what a timer
 * adds anyway (a millisecond, more on a busy event loop). A stamp that finds
 * fewer calls than a burst makes the next ones read the clock again: a timer
 * every millisecond costs a process that waits for I/O more than the clock
 * readings (about 2 % of an outbound HTTP request's CPU, measured). Calls
 * added while the scheduler expires others read the clock at once.
 *
 * With a `source` (a clock that has timers, such as a test's manual clock),
 * the same queues run on that clock instead, and each call reads it as it is
 * added: its breakers' deadlines move exactly when the test moves time. Such
 * a timer costs nothing to cancel, so it is cancelled as soon as nothing
 * waits, and a test that asks whether anything waits on its clock gets a true
 * answer.
 *
 * @internal
 */
export class DeadlineScheduler {
  private readonly queues = new Map<number, DeadlineQueue>();
  /** The queue of the last call added: most calls of a process share one timeout. */
  private last: DeadlineQueue | undefined = undefined;
  private waiting = 0;
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private cancelTimer: (() => void) | undefined = undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  /** The `setTimeout` that armed the deadline timer: one armed under other timers (fake ones in tests) never fires. */
  private timerArmedWith: typeof setTimeout | undefined = undefined;
  /** The zero-delay timer that gives the calls added since it was armed their due time. */
  private stampTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** The `setTimeout` that armed it: one armed before fake timers were installed (or after they were removed) never fires. */
  private stampArmedWith: typeof setTimeout | undefined = undefined;
  /** While `fire` expires calls: a call added meanwhile reads the clock at once. */
  private expiring = false;
  /** Calls come so often that they share a stamp; otherwise each reads the clock as it is added. */
  private dense = false;
  /** Since when the calls that read the clock one by one are counted, and how many came. */
  private burstStart = Number.NEGATIVE_INFINITY;
  private burstCalls = 0;
  /** Calls added since the stamp timer was armed. */
  private stampedCalls = 0;

  constructor(private readonly source?: TimerSource) {}

  private now(): number {
    return this.source === undefined ? performance.now() : this.source.monotonic();
  }

  /** Calls `deadline.expire()` in `timeoutMs`, unless `remove(deadline)` comes first. */
  add(deadline: Deadline, timeoutMs: number): void {
    let queue = this.last;
    if (queue === undefined || queue.timeoutMs !== timeoutMs) queue = this.queueOf(timeoutMs);
    deadline.queue = queue;
    deadline.next = undefined;
    deadline.prev = queue.tail;
    if (queue.tail === undefined) queue.head = deadline;
    else queue.tail.next = deadline;
    queue.tail = deadline;
    this.waiting++;
    if (this.source !== undefined || this.expiring || !this.dense) {
      const now = this.now();
      if (this.source === undefined && !this.expiring) this.countSparse(now);
      this.armFor((deadline.dueAt = now + timeoutMs), now);
      return;
    }
    this.stampedCalls++;
    if (queue.unstamped === undefined) queue.unstamped = deadline;
    if (this.stampTimer === undefined || this.stampArmedWith !== setTimeout) this.armStamp();
  }

  /**
   * Counts a call that read the clock: once `DENSE_CALLS` come within a
   * millisecond, those that follow share a stamp.
   */
  private countSparse(now: number): void {
    if (now - this.burstStart >= 1) {
      this.burstStart = now;
      this.burstCalls = 1;
    } else if (++this.burstCalls >= DENSE_CALLS) this.dense = true;
  }

  remove(deadline: Deadline): void {
    const queue = deadline.queue;
    if (queue === undefined) return;
    if (queue.unstamped === deadline) queue.unstamped = deadline.next;
    this.unlink(queue, deadline);
    this.dropIfEmpty(queue);
    if (this.waiting === 0 && this.cancelTimer !== undefined) this.disarm();
  }

  /**
   * Forgets a queue nobody waits in, unless it is the one used last (most
   * breakers use one deadline, and keep their queue): per-call deadlines of
   * ever new lengths (a gRPC deadline propagated from a caller) must not
   * leave a queue each behind, nor make every timer walk them all.
   */
  private dropIfEmpty(queue: DeadlineQueue): void {
    if (queue.head === undefined && queue !== this.last) this.queues.delete(queue.timeoutMs);
  }

  /** How many calls wait for their deadline (for tests and diagnostics). */
  get size(): number {
    return this.waiting;
  }

  /** How many deadline lengths it keeps a queue for (for tests). */
  get queueCount(): number {
    return this.queues.size;
  }

  private queueOf(timeoutMs: number): DeadlineQueue {
    let queue = this.queues.get(timeoutMs);
    if (queue === undefined) {
      queue = new DeadlineQueue(timeoutMs);
      this.queues.set(timeoutMs, queue);
    }
    const previous = this.last;
    this.last = queue;
    // The queue used last was kept for its length; once another is, it goes if nobody waits in it.
    if (previous !== undefined && previous !== queue) this.dropIfEmpty(previous);
    return queue;
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

  /**
   * The timer for a call due at `dueAt`, unless it is armed for earlier. One
   * that is overdue is left to fire: the event loop is late, and re-arming it
   * for `dueAt` would hold back the calls already due. Unless it was armed
   * under another time base (fake timers installed or removed since), where
   * it never fires: then it is armed again for when it was due.
   */
  private armFor(dueAt: number, now: number): void {
    if (dueAt < this.timerAt) this.arm(dueAt, now);
    else if (
      this.timerAt < now &&
      (this.source !== undefined || this.timerArmedWith !== setTimeout)
    )
      this.arm(this.timerAt, now);
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
    this.timerArmedWith = setTimeout;
    this.timer = setTimeout(this.fire, timerDelay(dueAt - now));
    // A deadline must never be the reason a process stays alive.
    this.timer.unref?.();
  }

  private disarm(): void {
    this.cancelTimer!();
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private armStamp(): void {
    // One armed under other timers is left to fire (or not) on its own: stamping twice is harmless.
    this.stampArmedWith = setTimeout;
    this.stampTimer = setTimeout(this.stampAll, 0);
    this.stampTimer.unref?.();
  }

  /** The stamp timer: every call that waits gets its due time, and the timer is armed for the earliest. */
  private readonly stampAll = (): void => {
    this.stampTimer = undefined;
    const now = this.now();
    // Fewer calls than a burst since it was armed (a millisecond or more): the next ones read the clock again.
    if (this.stampedCalls < DENSE_CALLS) {
      this.dense = false;
      this.burstStart = Number.NEGATIVE_INFINITY;
    }
    this.stampedCalls = 0;
    const earliest = this.stamp(now);
    if (earliest !== Number.POSITIVE_INFINITY) this.armFor(earliest, now);
  };

  /** Gives the calls without a due time theirs, from `now`; returns the earliest due time of all. */
  private stamp(now: number): number {
    let earliest = Number.POSITIVE_INFINITY;
    for (const queue of this.queues.values()) {
      let deadline = queue.unstamped;
      if (deadline !== undefined) {
        queue.unstamped = undefined;
        const dueAt = now + queue.timeoutMs;
        for (; deadline !== undefined; deadline = deadline.next) deadline.dueAt = dueAt;
      }
      const head = queue.head;
      if (head !== undefined && head.dueAt < earliest) earliest = head.dueAt;
    }
    return earliest;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.cancelTimer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    // A call without a due time must not be read as due: the stamp timer may come after this one.
    this.stamp(now);
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
      else if (head === undefined) this.dropIfEmpty(queue);
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next, now);
    // Expired after the bookkeeping: an expiry may settle other calls, or start new ones.
    this.expiring = true;
    try {
      for (const deadline of due) deadline.expire();
    } finally {
      this.expiring = false;
    }
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
