import type { BulkheadSnapshot } from '../snapshot/breaker-snapshot.js';
import type { Deadline, DeadlineQueue, DeadlineScheduler } from '../calls/deadline-scheduler.js';
import type { SettledHook } from '../calls/tracked-call.js';
import type { ResolvedBreakerOptions } from '../options/resolved-breaker-options.interface.js';
import type { LimitAlgorithm } from '../limit/limit-algorithm.js';
import { adaptiveCapOf, sampleOf } from './adaptive-cap.js';

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
 * call arriving meanwhile cannot overtake the queue. Its refusals are no
 * outcomes: whatever it refuses was never a call to the dependency.
 *
 * The cap is `maxConcurrent`, or the limit of an algorithm (`algorithm`)
 * that each call holding a slot tells, as it settles, how long it held it
 * and how it ended (`sampled()`): a larger limit lets waiters in at once, a
 * smaller one applies as calls settle.
 *
 * @internal
 */
export class Bulkhead {
  active = 0;
  queued = 0;
  /** Callers sent away by `dismissAll()` that have not come back yet. */
  rejoining = 0;
  /** How many calls may hold a slot now: `maxConcurrent`, or the algorithm's limit. */
  cap: number;
  /** An adaptive cap's algorithm: replaced when its options change. */
  private algorithm: LimitAlgorithm | undefined;
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
    /** The breaker's monotonic clock: how long an adaptive cap's calls held their slot. */
    private readonly clock: { monotonic(): number },
    private readonly idle?: () => void,
  ) {
    this.algorithm = adaptiveCapOf(limits, undefined, undefined);
    this.cap = this.algorithm?.limit ?? limits.maxConcurrent!;
  }

  /** Takes a slot if one is free. */
  tryEnter(): boolean {
    if (this.active >= this.cap) return false;
    this.active++;
    return true;
  }

  /**
   * The hook of a call that has just taken a slot, for an adaptive cap: as
   * the call settles, its measurement goes to the algorithm it started under
   * (none when `reconfigure()` replaced it meanwhile), then its slot is given
   * back.
   */
  sampled(): SettledHook {
    const algorithm = this.algorithm;
    if (algorithm === undefined) return this.leave;
    const startedAt = this.clock.monotonic();
    const inFlight = this.active;
    return (outcome, subject) => {
      const dropped = sampleOf(outcome, subject);
      if (dropped !== undefined && algorithm === this.algorithm) {
        algorithm.sample(startedAt, this.clock.monotonic() - startedAt, inFlight, dropped);
        this.cap = algorithm.limit;
      }
      this.leave();
      this.letIn();
    };
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
    if (waiter === undefined || this.active > this.cap) {
      if (--this.active === 0 && this.queued === 0 && this.rejoining === 0) this.idle?.();
      return;
    }
    this.drop(waiter);
    this.deadlines.remove(waiter);
    waiter.settle(GRANTED);
  };

  /**
   * New limits (`reconfigure()`): a larger cap lets waiters in at once; a
   * smaller one applies as calls settle. An adaptive cap whose algorithm and
   * bounds are unchanged keeps its algorithm and what it measured; otherwise
   * a new algorithm starts from the limit reached, within the new bounds.
   */
  setLimits(limits: BulkheadLimits): void {
    const previous = this.limits;
    this.limits = limits;
    this.algorithm = adaptiveCapOf(limits, previous, this.algorithm);
    this.cap = this.algorithm?.limit ?? limits.maxConcurrent!;
    this.letIn();
  }

  /** Hands free slots to the oldest waiters, while the cap allows. */
  private letIn(): void {
    while (this.head !== undefined && this.active < this.cap) {
      this.active++;
      const waiter = this.head;
      this.drop(waiter);
      this.deadlines.remove(waiter);
      waiter.settle(GRANTED);
    }
  }

  /**
   * Sends every waiter away without a slot (`DISMISSED`), oldest first. Each
   * is `rejoining` until its caller comes back (`rejoined()`): a caller let in
   * again takes its slot here, so the bulkhead is not idle meanwhile (a family
   * would drop the one it kept for the key, and the key's next child would cap
   * its calls anew beside this caller's).
   */
  dismissAll(): void {
    let waiter = this.head;
    while (waiter !== undefined) {
      this.rejoining++;
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
    if (--this.queued === 0 && this.active === 0 && this.rejoining === 0) this.idle?.();
  }

  /** A caller sent away by `dismissAll()` came back: it took a slot, queued again, or was refused. */
  rejoined(): void {
    if (--this.rejoining === 0 && this.active === 0 && this.queued === 0) this.idle?.();
  }

  snapshot(): BulkheadSnapshot {
    const algorithm = this.limits.algorithm;
    return {
      maxConcurrent: this.cap,
      ...(algorithm === undefined ? {} : { algorithm }),
      maxQueue: this.limits.maxQueue,
      active: this.active,
      queued: this.queued,
    };
  }
}
