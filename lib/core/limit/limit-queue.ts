import type { Deadline, DeadlineQueue } from '../calls/deadline-scheduler.js';
import type { Criticality } from './criticality.js';

/** How a wait for a place ended: it got one. @internal */
export const GRANTED = 0;
/** Its `queueTimeoutMs` passed. @internal */
export const TIMED_OUT = 1;
/** A more important request took its place in the full queue. @internal */
export const EVICTED = 2;
/** @internal */
export type WaitEnd = typeof GRANTED | typeof TIMED_OUT | typeof EVICTED;

/**
 * A request waiting for a place: in its criticality's line of the queue and,
 * for its timeout, in the limiter's deadline scheduler (no timer of its own).
 * @internal
 */
export class Waiter implements Deadline {
  dueAt = 0;
  prev: Deadline | undefined = undefined;
  next: Deadline | undefined = undefined;
  queue: DeadlineQueue | undefined = undefined;
  before: Waiter | undefined = undefined;
  after: Waiter | undefined = undefined;

  constructor(
    readonly rank: number,
    readonly criticality: Criticality,
    readonly settle: (how: WaitEnd) => void,
    readonly onExpire: (waiter: Waiter) => void,
  ) {}

  expire(): void {
    this.onExpire(this);
  }
}

/**
 * The requests waiting for a place, one line per criticality, oldest first
 * in each: a freed place goes to the oldest of the most important line, and a
 * full queue gives up the newest of the least important. O(1) per operation
 * (four lines). @internal
 */
export class LimitQueue {
  size = 0;
  private readonly heads: (Waiter | undefined)[] = [undefined, undefined, undefined, undefined];
  private readonly tails: (Waiter | undefined)[] = [undefined, undefined, undefined, undefined];

  push(waiter: Waiter): void {
    const tail = this.tails[waiter.rank];
    waiter.before = tail;
    if (tail === undefined) this.heads[waiter.rank] = waiter;
    else tail.after = waiter;
    this.tails[waiter.rank] = waiter;
    this.size++;
  }

  /** The oldest waiter of the most important line, taken out; none when empty. */
  shift(): Waiter | undefined {
    for (let rank = 0; rank < 4; rank++) {
      const head = this.heads[rank];
      if (head !== undefined) {
        this.remove(head);
        return head;
      }
    }
    return undefined;
  }

  /** The newest waiter less important than `rank`, from the least important line; none when there is none. */
  newestBelow(rank: number): Waiter | undefined {
    for (let line = 3; line > rank; line--) {
      const tail = this.tails[line];
      if (tail !== undefined) return tail;
    }
    return undefined;
  }

  /** Takes `waiter` out; nothing (and `false`) when it is not queued any more. */
  remove(waiter: Waiter): boolean {
    const { before, after, rank } = waiter;
    if (before === undefined) {
      if (this.heads[rank] !== waiter) return false;
      this.heads[rank] = after;
    } else before.after = after;
    if (after === undefined) this.tails[rank] = before;
    else after.before = before;
    waiter.before = waiter.after = undefined;
    this.size--;
    return true;
  }
}
