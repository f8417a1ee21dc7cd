import {
  SLOT_COUNTED,
  SLOT_FAILURE,
  SLOT_OVERLOAD,
  SLOT_SLOW,
  type OutcomeWindow,
} from './outcome-window.interface.js';

const FIELDS = 5;
const CALLS = 0;
const FAILURES = 1;
const SLOW = 2;
const OVERLOADS = 3;
const SHED = 4;

/**
 * Outcomes of the last `durationMs`, in `buckets` slices of equal width: it
 * adapts to time rather than to volume. Slices that have elapsed rotate out on
 * the next access, all at once after a long idle gap, so no timer is needed.
 *
 * @internal
 */
export class TimeWindow implements OutcomeWindow {
  calls = 0;
  failures = 0;
  slowCalls = 0;
  overloads = 0;
  shed = 0;
  // One row of FIELDS counters per bucket, in a plain array of small integers:
  // far smaller than a typed array for the handful of buckets a window has.
  private readonly counts: number[];
  private readonly bucketMs: number;
  /** The absolute number (now / bucketMs) of the newest bucket. */
  private head = -Infinity;
  private headIndex = 0;

  constructor(
    durationMs: number,
    private readonly buckets: number,
  ) {
    this.bucketMs = durationMs / buckets;
    this.counts = Array.from({ length: buckets * FIELDS }, () => 0);
  }

  record(slot: number, now: number): void {
    this.refresh(now);
    const row = this.headIndex * FIELDS;
    const counts = this.counts;
    if (slot & SLOT_COUNTED) {
      this.calls++;
      counts[row + CALLS]!++;
      if (slot & SLOT_FAILURE) {
        this.failures++;
        counts[row + FAILURES]!++;
      }
      if (slot & SLOT_SLOW) {
        this.slowCalls++;
        counts[row + SLOW]!++;
      }
    } else if (slot & SLOT_OVERLOAD) {
      this.overloads++;
      counts[row + OVERLOADS]!++;
    } else {
      this.shed++;
      counts[row + SHED]!++;
    }
  }

  refresh(now: number): void {
    const bucket = Math.floor(now / this.bucketMs);
    const steps = bucket - this.head;
    if (steps <= 0) return;
    if (steps >= this.buckets) {
      this.clear();
    } else {
      for (let s = 0; s < steps; s++) {
        this.headIndex = this.headIndex + 1 === this.buckets ? 0 : this.headIndex + 1;
        this.evict(this.headIndex * FIELDS);
      }
    }
    this.head = bucket;
  }

  reset(): void {
    this.clear();
    this.head = -Infinity;
  }

  private evict(row: number): void {
    const counts = this.counts;
    this.calls -= counts[row + CALLS]!;
    this.failures -= counts[row + FAILURES]!;
    this.slowCalls -= counts[row + SLOW]!;
    this.overloads -= counts[row + OVERLOADS]!;
    this.shed -= counts[row + SHED]!;
    counts.fill(0, row, row + FIELDS);
  }

  private clear(): void {
    this.counts.fill(0);
    this.calls = this.failures = this.slowCalls = this.overloads = this.shed = 0;
  }
}
