import { breakerMessages } from '../errors/breaker.messages.js';
import { closestName } from '../options/closest-name.js';

/**
 * What `force()` can hold a breaker in, one mode each (the state it reports),
 * and what snapshots, events and metrics name:
 * - `open` (state `isolated`): every call is rejected (a maintenance window, a dependency known to be down);
 * - `metrics-only` (state `metrics-only`): every call passes and is counted, and the breaker never trips;
 * - `disabled` (state `disabled`): every call passes and nothing is counted (a kill switch for the breaker itself).
 *
 * `breaker.force()` (and the fleet's and the tester's) also takes `'closed'`,
 * spelled in its signature as `ForcedMode | 'closed'`: an alias of
 * `metrics-only`, kept from 0.1.0, which is never shown (snapshots and events
 * say `metrics-only`). `registry.control(name).force()` takes the three modes only.
 *
 * @publicApi
 */
export type ForcedMode = 'open' | 'metrics-only' | 'disabled';

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
  state: ForcedMode;
  reason: string;
  by?: string;
  /** Clock time it was set. */
  since: number;
  /** Clock time it ends by itself, if it does. */
  until?: number;
}

/** A forced state as the breaker keeps it: times on its monotonic reading. @internal */
export interface Forcing {
  readonly state: ForcedMode;
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
const FORCEABLE: ReadonlySet<unknown> = new Set<unknown>([
  'open',
  'metrics-only',
  'disabled',
  'closed',
]);

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
    // One mode, one name: `closed` is the old spelling of `metrics-only`.
    state: state === 'closed' ? 'metrics-only' : (state as ForcedMode),
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
  state: ForcedMode;
  reason: string;
  by?: string;
} {
  return {
    state: forcing.state,
    reason: forcing.reason,
    ...(forcing.by === undefined ? {} : { by: forcing.by }),
  };
}
