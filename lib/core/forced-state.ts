import { breakerMessages } from './breaker.messages.js';
import { closestName } from './closest-name.js';

/**
 * What `breaker.force()` can hold a breaker in:
 * - `open`: every call is rejected (a maintenance window, a dependency known to be down);
 * - `closed`: every call passes and is recorded, and the breaker never trips;
 * - `disabled`: every call passes and nothing is recorded (a kill switch for the breaker itself).
 *
 * @publicApi
 */
export type ForceableState = 'open' | 'closed' | 'disabled';

/** @publicApi */
export interface ForceOptions {
  /** Why, for the people who read snapshots, health details and logs. Required: a forced state nobody can explain is an incident of its own. */
  reason: string;
  /** Who or what set it (a user, a runbook, a deployment). */
  by?: string;
  /** When the force ends by itself, as a time of the breaker's clock (`Date.now() + 15 * 60_000`). Default: until `release()`. */
  untilMs?: number;
}

/** A forced state as snapshots show it. @publicApi */
export interface ForcedStateSnapshot {
  state: ForceableState;
  reason: string;
  by?: string;
  /** Clock time it was set. */
  since: number;
  /** Clock time it ends by itself, if it does. */
  until?: number;
}

/** A forced state as the breaker keeps it: times on its monotonic reading. @internal */
export interface Forcing {
  readonly state: ForceableState;
  readonly reason: string;
  readonly by: string | undefined;
  readonly since: number;
  /** When it ends, on the monotonic reading (what the breaker checks against). */
  readonly until: number | undefined;
  /**
   * When it ends, as given (wall time): what the end is dated and shown as, on
   * every replica alike. Converting `until` back would differ by up to 1 ms,
   * as wall time is read in whole milliseconds.
   */
  readonly untilWall: number | undefined;
}

const FORCE_OPTIONS: readonly string[] = ['reason', 'by', 'untilMs'];
const FORCEABLE: ReadonlySet<unknown> = new Set<unknown>(['open', 'closed', 'disabled']);

/**
 * Checks what `force()` was given, before anything changes. `wallNow` and
 * `now` are the same instant on the wall clock and the monotonic reading.
 *
 * @internal
 */
export function forcingOf(
  breaker: string,
  state: unknown,
  options: unknown,
  wallNow: number,
  now: number,
): Forcing {
  if (!FORCEABLE.has(state)) throw new TypeError(breakerMessages.badForceState(breaker, state));
  if (typeof options !== 'object' || options === null)
    throw new TypeError(breakerMessages.badForceOptions(breaker, options));
  // A misspelt key (`until`) would otherwise be dropped silently, and the force never end.
  for (const key of Object.keys(options))
    if (!FORCE_OPTIONS.includes(key))
      throw new TypeError(
        breakerMessages.unknownForceOption(breaker, key, closestName(key, FORCE_OPTIONS)),
      );
  const { reason, by, untilMs } = options as Partial<ForceOptions>;
  if (typeof reason !== 'string' || reason.trim() === '')
    throw new TypeError(breakerMessages.badForceReason(breaker, reason));
  if (by !== undefined && typeof by !== 'string')
    throw new TypeError(breakerMessages.badForceBy(breaker, by));
  if (
    untilMs !== undefined &&
    (typeof untilMs !== 'number' || !Number.isFinite(untilMs) || untilMs <= wallNow)
  ) {
    throw new TypeError(breakerMessages.badForceUntil(breaker, untilMs, wallNow));
  }
  return {
    state: state as ForceableState,
    reason,
    by,
    since: now,
    until: untilMs === undefined ? undefined : now + (untilMs - wallNow),
    untilWall: untilMs,
  };
}

/** @internal */
export function forcedSnapshot(forcing: Forcing, toWall: number): ForcedStateSnapshot {
  return {
    state: forcing.state,
    reason: forcing.reason,
    ...(forcing.by === undefined ? {} : { by: forcing.by }),
    since: forcing.since + toWall,
    ...(forcing.untilWall === undefined ? {} : { until: forcing.untilWall }),
  };
}

/** What a `stateChange` event of reason `forced` says of the force. @internal */
export function forcedEvent(forcing: Forcing): {
  state: ForceableState;
  reason: string;
  by?: string;
} {
  return {
    state: forcing.state,
    reason: forcing.reason,
    ...(forcing.by === undefined ? {} : { by: forcing.by }),
  };
}
