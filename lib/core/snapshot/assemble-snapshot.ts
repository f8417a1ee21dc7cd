import type { BreakerCoordination } from '../ports/breaker-coordinator.interface.js';
import type { BreakerCounters } from './breaker-counters.js';
import type { RareState, LastChange } from '../state/rare-state.js';
import type { FamilySnapshot } from '../family/breaker-family.js';
import {
  describeFailure,
  type BreakerSnapshot,
  type TransitionEvidence,
} from './breaker-snapshot.js';
import { OPEN, stateName, type StateCode } from '../state/breaker-state.js';
import type { ForcedStateSnapshot } from '../state/forced-state.js';
import type { HalfOpenRound } from '../recovery/half-open-round.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import type { OutcomeWindow } from '../window/outcome-window.interface.js';

/** What a breaker hands over to describe itself at `now` (its monotonic reading); every time in it is monotonic. @internal */
export interface SnapshotParts {
  readonly name: string;
  readonly key: string | undefined;
  readonly config: ResolvedBreakerOptions;
  readonly now: number;
  /** Wall time minus the monotonic reading: what turns the breaker's times into the times people read. */
  readonly toWall: number;
  readonly state: StateCode;
  readonly since: number;
  readonly openUntil: number;
  /** When the dependency's pause ends, 0 for none. */
  readonly pausedUntil: number;
  /** While open: how long until a call may be admitted. */
  readonly openRetryAfter: number;
  readonly generation: number;
  /** Already refreshed to `now`. */
  readonly window: OutcomeWindow;
  readonly shed: number;
  readonly round: HalfOpenRound | undefined;
  readonly counters: BreakerCounters;
  readonly rare: RareState | undefined;
  readonly family: FamilySnapshot | undefined;
  readonly coordination: BreakerCoordination | undefined;
  readonly forced: ForcedStateSnapshot | undefined;
  readonly nextOpenDurationMs: number;
  /** The recovery features' part (bulkhead, ramp, health check), when the breaker has any. */
  readonly recovery: Partial<BreakerSnapshot> | undefined;
}

/**
 * The readable shape of a breaker at one instant: built only when someone
 * asks (a health indicator, a scrape, a dashboard), never on a call's path.
 *
 * @internal
 */
export function assembleSnapshot(p: SnapshotParts): BreakerSnapshot {
  const { config: c, window: w, now, toWall, rare } = p;
  const open = p.state === OPEN;
  const paused = p.pausedUntil > now;
  return {
    name: p.name,
    ...(p.key === undefined ? {} : { key: p.key }),
    state: stateName(p.state),
    since: p.since + toWall,
    openUntil: open ? p.openUntil + toWall : undefined,
    pausedUntil: paused ? p.pausedUntil + toWall : undefined,
    retryAfterMs: open ? p.openRetryAfter : paused ? p.pausedUntil - now : undefined,
    generation: p.generation,
    window: {
      ...(c.window.type === 'count'
        ? { type: 'count', size: c.window.size }
        : { type: 'time', durationMs: c.window.durationMs, buckets: c.window.buckets }),
      calls: w.calls,
      failures: w.failures,
      slowCalls: w.slowCalls,
      overloads: w.overloads,
      shed: p.shed,
      failureRate: w.calls === 0 ? 0 : w.failures / w.calls,
      slowCallRate: w.calls === 0 ? 0 : w.slowCalls / w.calls,
    },
    halfOpen: p.round?.snapshot(),
    totals: p.counters.totals(),
    timeInStateMs: p.counters.timeInState(p.state, now - p.since),
    ...(rare?.lastChange === undefined
      ? {}
      : { lastTransition: transitionEvidence(rare.lastChange, toWall) }),
    ...(rare?.lastFailure === undefined
      ? {}
      : { lastFailure: describeFailure(rare.lastFailure, rare.lastFailureCategory) }),
    ...(p.family === undefined ? {} : { family: p.family }),
    ...(p.coordination === undefined ? {} : { coordination: p.coordination }),
    ...(p.forced === undefined ? {} : { forced: p.forced }),
    ...p.recovery,
    thresholds: {
      failureRateThreshold: c.rateRule ? c.failureRateThreshold : undefined,
      minimumThroughput: c.minimumThroughput,
      consecutiveFailures: c.consecutiveFailures,
      slowCallDurationMs: c.slowCallDurationMs,
      slowCallRateThreshold: c.slowCallRateThreshold,
      timeoutMs: c.timeoutMs,
      openDurationMs: c.openDurationMs,
      nextOpenDurationMs: p.nextOpenDurationMs,
      maxProbes: c.maxProbes,
      maxConcurrentProbes: c.maxConcurrentProbes,
      successesToClose: c.successesToClose,
    },
  };
}

function transitionEvidence(change: LastChange, toWall: number): TransitionEvidence {
  const window = change.window;
  return {
    from: stateName(change.from),
    to: stateName(change.to),
    reason: change.reason,
    at: change.at + toWall,
    ...(window === undefined
      ? {}
      : {
          window: {
            ...window,
            failureRate: window.calls === 0 ? 0 : window.failures / window.calls,
          },
        }),
    ...(change.consecutiveFailures === undefined
      ? {}
      : { consecutiveFailures: change.consecutiveFailures }),
    ...(change.children === undefined ? {} : { children: { ...change.children } }),
  };
}
