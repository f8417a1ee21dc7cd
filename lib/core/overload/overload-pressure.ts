import { OverloadThrottle } from './overload-throttle.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';

// How long overload evidence counts with a count window; a time window uses its own duration. SRE's throttle looks at minutes.
const OVERLOAD_WINDOW_MS = 60_000;

/**
 * What a closed breaker holds while its dependency reports overload (429, or
 * 503 with `Retry-After`): the pause the dependency asked for, and the
 * evidence client-side throttling sheds calls by. Overload is not breakage:
 * the breaker backs off without opening. Created on the first overload and
 * dropped once both have passed, so the closed path checks one field.
 *
 *
 * @internal
 */
export class OverloadPressure {
  /** When the dependency's `Retry-After` pause ends (monotonic); 0 for none. */
  pausedUntil = 0;
  /** Only with `overloadK` set: the evidence of the last window. */
  throttle: OverloadThrottle | undefined = undefined;

  /**
   * The dependency refused a call as overloaded: a pause of `hint` ms if it
   * asked for one, otherwise evidence for client-side throttling.
   */
  record(
    config: ResolvedBreakerOptions,
    now: number,
    hint: number | undefined,
    acceptedBefore: number,
  ): void {
    if (hint !== undefined && hint > 0) {
      const until = now + Math.min(hint, config.maxRetryAfterMs);
      if (until > this.pausedUntil) this.pausedUntil = until;
      // The dependency said when to come back: the pause is the back-off, not evidence to shed by once it ends.
      return;
    }
    if (config.overloadK === 0) return;
    const w = config.window;
    // The accepted calls the window holds are the evidence that came before: the throttle starts with them.
    const throttle = (this.throttle ??= new OverloadThrottle(
      w.type === 'time' ? w.durationMs : OVERLOAD_WINDOW_MS,
      now,
      acceptedBefore,
    ));
    throttle.record(true, now);
  }

  /** The dependency accepted a call. */
  accepted(now: number): void {
    this.throttle?.record(false, now);
  }

  /** What is left of the pause at `now`, 0 once it has passed. */
  pauseLeft(now: number): number {
    if (this.pausedUntil === 0) return 0;
    if (now < this.pausedUntil) return this.pausedUntil - now;
    this.pausedUntil = 0;
    return 0;
  }

  /**
   * Whether to shed this call (Google SRE client-side throttling: in proportion
   * to what the dependency refuses). A random number is only drawn when there is
   * something to shed, so seeded tests see the same draws as before.
   */
  shed(config: ResolvedBreakerOptions, now: number, source: { draw(): number }): boolean {
    const throttle = this.throttle;
    if (throttle === undefined) return false;
    const rejectProbability = throttle.rejectProbability(
      config.overloadK,
      config.minimumThroughput,
      now,
    );
    if (rejectProbability > 0 && source.draw() < rejectProbability) {
      throttle.countShed(now);
      return true;
    }
    // The overloads have left its window: the dependency is healthy again.
    if (throttle.overloads === 0) this.throttle = undefined;
    return false;
  }

  /** Nothing left to honour: the breaker can drop this and take the plain path again. */
  get spent(): boolean {
    return this.pausedUntil === 0 && this.throttle === undefined;
  }

  /** Calls shed in the throttle's window, for the snapshot. */
  shedInWindow(now: number): number {
    const throttle = this.throttle;
    if (throttle === undefined) return 0;
    throttle.refresh(now);
    return throttle.shed;
  }

  /** A transition starts the evidence afresh (as it starts the window afresh); a pause the dependency asked for still stands. */
  endEvidence(): void {
    this.throttle = undefined;
  }
}
