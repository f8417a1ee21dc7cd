import type { BulkheadSnapshot } from '../snapshot/breaker-snapshot.js';
import type { Deadline, DeadlineQueue, DeadlineScheduler } from '../calls/deadline-scheduler.js';
import type { ResolvedBreakerOptions } from '../options/resolved-breaker-options.interface.js';

/** @internal The limits a bulkhead is judged by (a breaker's resolved `bulkhead`). */
export type BulkheadLimits = NonNullable<ResolvedBreakerOptions['bulkhead']>;

/** How a wait in the queue ended. @internal */
export const GRANTED = 0;
/** @internal */
export const TIMED_OUT = 1;
/** Sent away without a slot: its breaker opened, and would refuse it at its turn. @internal */
export const DISMISSED = 2;
/** @internal */
export type WaitEnd = typeof GRANTED | typeof TIMED_OUT | typeof DISMISSED;

/**
 * A call waiting for a slot, in the bulkhead's queue (oldest first) and, for
 * its wait's end, in its breaker's deadline scheduler (the process's, or its
 * clock's timers): no timer of its own.
 */
class Waiter implements Deadline {
  dueAt = 0;
  prev: Deadline | undefined = undefined;
  next: Deadline | undefined = undefined;
  queue: DeadlineQueue | undefined = undefined;
  /** Its place in the bulkhead's own queue. */
  before: Waiter | undefined = undefined;
  after: Waiter | undefined = undefined;

  constructor(
    private readonly bulkhead: Bulkhead,
    readonly settle: (how: WaitEnd) => void,
  ) {}

  expire(): void {
    this.bulkhead.drop(this);
    this.settle(TIMED_OUT);
  }
}

/**
 * The concurrency cap of one breaker: how many calls run, and who waits for
 * a slot. A slot that frees is handed straight to the oldest waiter, so a
 * call arriving meanwhile cannot overtake the queue. It knows nothing of
 * outcomes: whatever it refuses was never a call to the dependency.
 *
 * @internal
 */
export class Bulkhead {
  active = 0;
  queued = 0;
  private head: Waiter | undefined = undefined;
  private tail: Waiter | undefined = undefined;

  /**
   * `idle` (a family's child only) hears when the bulkhead holds and awaits no
   * call any more: a bulkhead its family kept for a key after evicting its
   * child may then be dropped.
   */
  constructor(
    private limits: BulkheadLimits,
    /** Where queue timeouts wait: the breaker's per-call deadline scheduler, so they follow its clock's timers. */
    private readonly deadlines: DeadlineScheduler,
    private readonly idle?: () => void,
  ) {}

  /** Takes a slot if one is free. */
  tryEnter(): boolean {
    if (this.active >= this.limits.maxConcurrent) return false;
    this.active++;
    return true;
  }

  get canQueue(): boolean {
    return this.queued < this.limits.maxQueue;
  }

  /**
   * Waits for a slot: `GRANTED` holds one; `TIMED_OUT` after `queueTimeoutMs`;
   * `DISMISSED` holds none (`dismissAll()`); the caller's abort rejects with
   * its reason. Only when `canQueue`.
   */
  wait(signal: AbortSignal | undefined): Promise<WaitEnd> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.drop(waiter);
        this.deadlines.remove(waiter);
        reject(signal!.reason);
      };
      const waiter = new Waiter(this, (how) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(how);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      waiter.before = this.tail;
      if (this.tail === undefined) this.head = waiter;
      else this.tail.after = waiter;
      this.tail = waiter;
      this.queued++;
      this.deadlines.add(waiter, this.limits.queueTimeoutMs);
    });
  }

  /** Gives a slot back: to the oldest waiter, or to the pool. Bound, so that a call can hold it without a closure. */
  readonly leave = (): void => {
    const waiter = this.head;
    if (waiter === undefined || this.active > this.limits.maxConcurrent) {
      if (--this.active === 0 && this.queued === 0) this.idle?.();
      return;
    }
    this.drop(waiter);
    this.deadlines.remove(waiter);
    waiter.settle(GRANTED);
  };

  /** New limits (`reconfigure()`): a larger cap lets waiters in at once; a smaller one applies as calls settle. */
  setLimits(limits: BulkheadLimits): void {
    this.limits = limits;
    while (this.head !== undefined && this.active < limits.maxConcurrent) {
      this.active++;
      const waiter = this.head;
      this.drop(waiter);
      this.deadlines.remove(waiter);
      waiter.settle(GRANTED);
    }
  }

  /** Sends every waiter away without a slot (`DISMISSED`), oldest first. */
  dismissAll(): void {
    let waiter = this.head;
    while (waiter !== undefined) {
      this.drop(waiter);
      this.deadlines.remove(waiter);
      waiter.settle(DISMISSED);
      waiter = this.head;
    }
  }

  /** @internal Takes a waiter out of the queue (granted, timed out or aborted). */
  drop(waiter: Waiter): void {
    const { before, after } = waiter;
    if (before === undefined) {
      if (this.head !== waiter) return;
      this.head = after;
    } else before.after = after;
    if (after === undefined) this.tail = before;
    else after.before = before;
    waiter.before = waiter.after = undefined;
    if (--this.queued === 0 && this.active === 0) this.idle?.();
  }

  snapshot(): BulkheadSnapshot {
    return {
      maxConcurrent: this.limits.maxConcurrent,
      maxQueue: this.limits.maxQueue,
      active: this.active,
      queued: this.queued,
    };
  }
}
