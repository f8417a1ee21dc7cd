/**
 * The longest delay a timer honours: `setTimeout` and `setInterval` fire after
 * 1 ms for anything longer (with a `TimeoutOverflowWarning` each time), which
 * turns a long wait into a busy loop.
 *
 * @internal
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * `ms` as a timer can wait it: at most `MAX_TIMER_MS`, and 0 for a negative or
 * NaN delay. Every timer of the package is armed through it, so a delay
 * computed from a clock, a Redis record or an upstream hint can never make a
 * timer fire at once over and over; a timer cut short this way fires early,
 * and its callback checks what is due and arms again.
 *
 * @internal
 */
export function timerDelay(ms: number): number {
  return ms > 0 ? (ms < MAX_TIMER_MS ? ms : MAX_TIMER_MS) : 0;
}
