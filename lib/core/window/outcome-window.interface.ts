/**
 * Slot codes: what one recorded outcome was. `SLOW` combines with `SUCCESS` or
 * `FAILURE`. `OVERLOAD` and `SHED` feed client-side throttling only.
 *
 * @internal
 */
export const SLOT_EMPTY = 0;
export const SLOT_SUCCESS = 1;
export const SLOT_FAILURE = 2;
export const SLOT_SLOW = 4;
export const SLOT_OVERLOAD = 8;
export const SLOT_SHED = 16;
export const SLOT_COUNTED = SLOT_SUCCESS | SLOT_FAILURE;

/**
 * The rolling population a breaker judges. Counters are kept incrementally so
 * that reading them is O(1); `refresh(now)` rotates a time window before a read.
 *
 * @internal
 */
export interface OutcomeWindow {
  /** Counted calls: successes and failures. */
  readonly calls: number;
  readonly failures: number;
  readonly slowCalls: number;
  readonly overloads: number;
  /** Calls shed locally by throttling. */
  readonly shed: number;
  record(slot: number, now: number): void;
  refresh(now: number): void;
  reset(): void;
}
