import type { RampUpSnapshot } from '../snapshot/breaker-snapshot.js';
import type { ResolvedBreakerOptions } from '../options/resolved-breaker-options.interface.js';

// The share grows continuously: a rejected caller may well pass a moment later.
const MAX_RETRY_AFTER_MS = 1_000;

/**
 * The slow start of a breaker that has just closed: the share of calls it
 * admits grows linearly from `initialRatio` to all of them over `durationMs`.
 * Admission is by credit, not by chance: each call adds the current share,
 * and a call passes when a whole unit has built up, so exactly that share
 * passes and a test can count it. The first call after closing passes.
 *
 * Created when a recovery closes the breaker, dropped by its next transition
 * or once the ramp is over: a breaker that is not ramping holds nothing.
 *
 * @internal
 */
export class RampUp {
  private credit = 1;
  private readonly until: number;

  constructor(
    private readonly options: NonNullable<ResolvedBreakerOptions['rampUp']>,
    private readonly startedAt: number,
    /** The breaker's consecutive reopens when the recovery closed it: a ramp that fails reopens as one more. */
    readonly reopens: number,
  ) {
    this.until = startedAt + options.durationMs;
  }

  /** The share admitted at `now`, in (0, 1]. */
  share(now: number): number {
    const { initialRatio, durationMs } = this.options;
    const elapsed = Math.max(0, now - this.startedAt);
    return Math.min(1, initialRatio + ((1 - initialRatio) * elapsed) / durationMs);
  }

  ended(now: number): boolean {
    return now >= this.until;
  }

  /** Whether the call arriving at `now` is within the share. */
  admit(now: number): boolean {
    this.credit += this.share(now);
    if (this.credit < 1) return false;
    this.credit -= 1;
    return true;
  }

  /** For a call turned away: until the ramp ends, at most 1 s. */
  retryAfter(now: number): number {
    return Math.max(1, Math.min(this.until - now, MAX_RETRY_AFTER_MS));
  }

  snapshot(now: number, toWall: number): RampUpSnapshot {
    return { ratio: this.share(now), until: this.until + toWall };
  }
}
