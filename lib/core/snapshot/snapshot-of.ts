import { assembleSnapshot } from './assemble-snapshot.js';
import type { BreakerSnapshot } from './breaker-snapshot.js';
import type { CoordinatedBreaker } from '../ports/breaker-coordinator.interface.js';
import type { BreakerEnvironment } from '../ports/breaker-environment.js';
import type { RareState } from '../state/rare-state.js';
import { HALF_OPEN, OPEN, type StateCode } from '../state/breaker-state.js';
import { forcedSnapshot } from '../state/forced-state.js';
import { baseOpenDuration } from '../state/open-duration.js';
import { openRetryAfter, type AdmittingBreaker } from '../state/admission.js';
import type { FamilySnapshot } from '../family/breaker-family.js';
import type { OutcomeWindow } from '../window/outcome-window.interface.js';

/** What a snapshot reads of a breaker. @internal */
export interface SnapshotHost extends AdmittingBreaker, CoordinatedBreaker {
  readonly key: string | undefined;
  readonly env: BreakerEnvironment;
  readonly current: StateCode;
  readonly sinceAt: number;
  readonly wallOffset: number;
  readonly reopens: number;
  readonly window: OutcomeWindow;
  readonly rare: RareState | undefined;
  readonly keyed: { snapshot(): FamilySnapshot } | undefined;
  readonly parts: { snapshot(now: number, toWall: number): Partial<BreakerSnapshot> } | undefined;
  refresh(now: number, admitting: boolean): void;
}

/** @internal `snapshot()`: the breaker at its current reading, after the transitions due. */
export function snapshotOf(b: SnapshotHost): BreakerSnapshot {
  const now = b.monotonic();
  b.refresh(now, false);
  b.window.refresh(now);
  const state = b.current;
  const forced = b.rare?.forced;
  const snapshot = assembleSnapshot({
    name: b.name,
    key: b.key,
    config: b.config,
    now,
    toWall: b.wallOffset,
    state,
    since: b.sinceAt,
    openUntil: b.openUntilAt,
    pausedUntil: b.overload?.pausedUntil ?? 0,
    openRetryAfter: state === OPEN ? openRetryAfter(b, now) : 0,
    generation: b.generation,
    window: b.window,
    shed: b.overload?.shedInWindow(now) ?? 0,
    round: b.round,
    counters: b.counters,
    rare: b.rare,
    family: b.keyed?.snapshot(),
    coordination: b.env.coordinator?.coordinationOf?.(b),
    forced: forced === undefined ? undefined : forcedSnapshot(forced, b.wallOffset),
    recovery: b.parts?.snapshot(now, b.wallOffset),
    nextOpenDurationMs: baseOpenDuration(
      b.config,
      state === HALF_OPEN || state === OPEN ? b.reopens + 1 : b.reopens,
    ),
  });
  // A game day's fault shows where people look: dashboards, /breakers endpoints.
  const fault = b.rare?.faults;
  if (fault !== undefined) snapshot.injectedFault = fault.snapshot();
  return snapshot;
}
