import { RareState, type ChildrenEvidence, type TransitionProof } from './rare-state.js';
import type { BreakerCounters } from '../snapshot/breaker-counters.js';
import type { BreakerEnvironment } from '../ports/breaker-environment.js';
import type { BreakerEventHub } from '../events/breaker-events.js';
import type { CoordinatedBreaker } from '../ports/breaker-coordinator.interface.js';
import type { FamilyMember, FamilyTransitions } from '../family/breaker-family.js';
import type { OutcomeWindow } from '../window/outcome-window.interface.js';
import type { OverloadPressure } from '../overload/overload-pressure.js';
import {
  CLOSED,
  HALF_OPEN,
  OPEN,
  stateName,
  type StateCode,
  type TransitionReason,
} from './breaker-state.js';
import { forcedEvent } from './forced-state.js';
import { abandonProbes, HalfOpenRound } from '../recovery/half-open-round.js';
import type { FailureCategory } from './breaker-state.js';
import { openDuration } from './open-duration.js';
import { publishStateChange } from '../ports/channel-messages.js';

/**
 * What the state machine reads and moves on a breaker: its state fields. They
 * stay on the breaker itself, where its closed fast path reads them without
 * a hop; the transitions are functions over this view.
 *
 * @internal
 */
export interface MachineHost extends FamilyMember, CoordinatedBreaker {
  readonly parent: (MachineHost & { readonly keyed: FamilyTransitions | undefined }) | undefined;
  readonly env: BreakerEnvironment;
  readonly counters: BreakerCounters;
  readonly hub: BreakerEventHub | undefined;
  window: OutcomeWindow;
  current: StateCode;
  sinceAt: number;
  wallOffset: number;
  generation: number;
  generationStart: number;
  streakStart: number;
  openUntilAt: number;
  reopens: number;
  consecutiveFailures: number;
  rare: RareState | undefined;
  overload: OverloadPressure | undefined;
  round: HalfOpenRound | undefined;
  monotonic(): number;
  draw(): number;
  noteFailure(failure: unknown, category: FailureCategory | 'overload'): void;
}

/**
 * Moves `breaker` to state `to`: the one place a state changes. Starts the
 * evidence, the window and the probe budget afresh as the new state needs,
 * tells the family, the listeners, the channels and the coordinator, and lets the parts
 * start a slow start or a health check.
 *
 * @internal
 */
export function transition(
  breaker: MachineHost,
  to: StateCode,
  reason: TransitionReason,
  now: number,
  retryAfterHint: number | undefined,
  adoptedOpenUntil?: number,
  /** The wall time the transition is dated (events, replicas), when it came in as one: a force's end. */
  datedAt?: number,
  children?: ChildrenEvidence,
): void {
  const b = breaker;
  const from = b.current;
  const ramp = b.rare?.parts?.ramp;
  // A recovery that did not hold, by whichever rule, is a failed probe as far as backoff goes: the open period grows.
  if (ramp !== undefined && to === OPEN && from === CLOSED && !ramp.ended(now))
    b.reopens = ramp.reopens + 1;
  const reopens = b.reopens;
  const proof = (b.rare ??= new RareState()).noteTransition(
    from,
    to,
    reason,
    now,
    b.window,
    b.consecutiveFailures,
    children,
  );
  b.counters.spend(from, now - b.sinceAt);
  b.current = to;
  b.sinceAt = now;
  // From the current readings: `now` may be when the transition was due, earlier than this moment.
  const toWall = (b.wallOffset = b.env.clock.now() - b.monotonic());
  b.generation++;
  b.streakStart = b.generationStart = b.counters.admitted;
  if (b.round !== undefined) abandonProbes(b.round, b.counters, b.hub);
  b.round = undefined;
  b.consecutiveFailures = 0;
  b.openUntilAt = 0;
  // Opening or closing starts the evidence afresh, as it starts the window afresh; a pause the dependency asked for stands.
  if (b.overload !== undefined) {
    b.overload.endEvidence();
    if (b.overload.spent) b.overload = undefined;
  }
  if (to === OPEN) {
    if (from === HALF_OPEN) b.reopens++;
    b.openUntilAt =
      adoptedOpenUntil === undefined
        ? now + openDuration(b.config, b.reopens, b, retryAfterHint)
        : adoptedOpenUntil - toWall;
    b.window.reset();
  } else if (to === HALF_OPEN) {
    b.round = new HalfOpenRound(b.config);
  } else if (to === CLOSED) {
    b.reopens = 0;
    b.window.reset();
  }
  b.parent?.keyed!.childTransitioned(b, stateName(from), stateName(to), now);
  // Every Nest breaker has channels: the event is built only when someone listens on them.
  if (
    b.hub !== undefined ||
    b.env.coordinator !== undefined ||
    b.env.channels?.stateChange.hasSubscribers === true
  )
    announce(b, from, to, reason, datedAt ?? now + toWall, toWall, proof);
  // A recovery that closes the breaker starts its slow start; opening starts its health check.
  b.rare?.parts?.transitioned(to, reason, now, reopens);
}

/** Tells the listeners and the coordinator of a transition, in wall times: people read them, and replicas share them. */
function announce(
  b: MachineHost,
  from: StateCode,
  to: StateCode,
  reason: TransitionReason,
  at: number,
  toWall: number,
  proof: TransitionProof,
): void {
  const change = {
    from: stateName(from),
    to: stateName(to),
    reason,
    at,
    ...(to === OPEN ? { openUntil: b.openUntilAt + toWall } : {}),
    ...proof,
    ...(reason === 'forced' ? { forced: forcedEvent(b.rare!.forced!) } : {}),
  };
  b.hub?.emit('stateChange', change);
  const channel = b.env.channels?.stateChange;
  if (channel?.hasSubscribers === true) publishStateChange(channel, b.name, change);
  b.env.coordinator?.transitioned(b, change);
}
