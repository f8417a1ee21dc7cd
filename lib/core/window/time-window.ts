import {
  SLOT_COUNTED,
  SLOT_FAILURE,
  SLOT_OVERLOAD,
  SLOT_SLOW,
  type OutcomeWindow,
} from './outcome-window.interface.js';

// Every counted call moves a bucket's calls and perhaps its failures; slow
// calls (only with `slowCallDurationMs`), overloads and shed calls are rare, so
// their rows are created the first time one is recorded: a breaker that never
// sees one holds 2 counters per bucket, not 5.
const FIELDS = 2;
const CALLS = 0;
const FAILURES = 1;
const RARE_FIELDS = 3;
const SLOW = 0;
const OVERLOADS = 1;
const SHED = 2;

/** The rows and totals of the rare outcomes, made at the first one. */
class RareRows {
  slowCalls = 0;
  overloads = 0;
  shed = 0;
  readonly rows: number[];

  constructor(buckets: number) {
    this.rows = Array.from({ length: buckets * RARE_FIELDS }, () => 0);
  }

  evict(index: number): void {
    const rows = this.rows;
    const row = index * RARE_FIELDS;
    this.slowCalls -= rows[row + SLOW]!;
    this.overloads -= rows[row + OVERLOADS]!;
    this.shed -= rows[row + SHED]!;
    rows[row + SLOW] = rows[row + OVERLOADS] = rows[row + SHED] = 0;
  }

  clear(): void {
    this.rows.fill(0);
    this.slowCalls = this.overloads = this.shed = 0;
  }
}

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
  // One row of counters per bucket, in a plain array of small integers:
  // far smaller than a typed array for the handful of buckets a window has.
  private readonly counts: number[];
  private rare: RareRows | undefined = undefined;
  private readonly bucketMs: number;
  /** The absolute number (now / bucketMs) of the newest bucket. */
  private head: number;
  private headIndex = 0;

  /** `now`: when the window starts, empty (every bucket before it is). */
  constructor(
    durationMs: number,
    private readonly buckets: number,
    now: number,
  ) {
    this.bucketMs = durationMs / buckets;
    this.counts = Array.from({ length: buckets * FIELDS }, () => 0);
    this.head = Math.floor(now / this.bucketMs);
  }

  get slowCalls(): number {
    return this.rare?.slowCalls ?? 0;
  }

  get overloads(): number {
    return this.rare?.overloads ?? 0;
  }

  get shed(): number {
    return this.rare?.shed ?? 0;
  }

  record(slot: number, now: number): void {
    this.refresh(now);
    const index = this.headIndex;
    const counts = this.counts;
    if (slot & SLOT_COUNTED) {
      this.calls++;
      counts[index * FIELDS + CALLS]!++;
      if (slot & SLOT_FAILURE) {
        this.failures++;
        counts[index * FIELDS + FAILURES]!++;
      }
      if (slot & SLOT_SLOW) {
        const rare = this.rareRows();
        rare.slowCalls++;
        rare.rows[index * RARE_FIELDS + SLOW]!++;
      }
    } else if (slot & SLOT_OVERLOAD) {
      const rare = this.rareRows();
      rare.overloads++;
      rare.rows[index * RARE_FIELDS + OVERLOADS]!++;
    } else {
      const rare = this.rareRows();
      rare.shed++;
      rare.rows[index * RARE_FIELDS + SHED]!++;
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
        this.evict(this.headIndex);
      }
    }
    this.head = bucket;
  }

  /** Empties the window; it goes on rotating from where it is. */
  reset(): void {
    this.clear();
  }

  private rareRows(): RareRows {
    return (this.rare ??= new RareRows(this.buckets));
  }

  private evict(index: number): void {
    const counts = this.counts;
    const row = index * FIELDS;
    this.calls -= counts[row + CALLS]!;
    this.failures -= counts[row + FAILURES]!;
    counts[row + CALLS] = counts[row + FAILURES] = 0;
    this.rare?.evict(index);
  }

  private clear(): void {
    this.counts.fill(0);
    this.rare?.clear();
    this.calls = this.failures = 0;
  }
}
