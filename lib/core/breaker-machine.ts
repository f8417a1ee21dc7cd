import { BreakerCounters } from './snapshot/breaker-counters.js';
import type { BreakerEnvironment } from './ports/breaker-environment.js';
import type { BreakerEventHub, BreakerEventName } from './events/breaker-events.js';
import {
  BreakerEvidence,
  type ChildrenEvidence,
  type TransitionProof,
} from './state/breaker-evidence.js';
import type { FamilyTransitions } from './family/breaker-family.js';
import {
  CLOSED,
  DISABLED,
  HALF_OPEN,
  ISOLATED,
  METRICS_ONLY,
  OPEN,
  stateName,
  type BreakerState,
  type FailureCategory,
  type ReconfigurationReset,
  type StateCode,
  type TransitionReason,
} from './state/breaker-state.js';
import { BreakerHookError, CallTimeoutError } from './errors/breaker.errors.js';
import { breakerMessages } from './errors/breaker.messages.js';
import type { Clock } from './ports/clock.js';
import { forcedEvent, type Forcing } from './state/forced-state.js';
import { abandonProbes, HalfOpenRound } from './recovery/half-open-round.js';
import { openDuration } from './state/open-duration.js';
import type { OverloadPressure } from './overload/overload-pressure.js';
import type { ResolvedBreakerOptions } from './options/resolve-options.js';
import type { OutcomeWindow } from './window/outcome-window.interface.js';
import { sameWindow, windowOf } from './window/window-of.js';
import type { AdmissionDecision } from './state/admission-decision.js';
import { behaviorOf } from './state/state-behaviors.js';

import { guardOf } from './calls/guard-slot.js';

/**
 * The state machine of a breaker: its state, what it admits, and how it moves
 * between closed, open and half-open (and the states held by hand: isolated,
 * metrics-only, disabled).
 * Three layers make a breaker, each reading the one below:
 * - `BreakerMachine` (here): the state and its transitions;
 * - `BreakerCalls`: what a call does to it (admission, then settlement);
 * - `Breaker`: the public face (running calls, events, control, snapshots).
 *
 * The closed path (admit, then settle a success) stays inline in these
 * classes; the rare paths live with their collaborators: the half-open round,
 * the trip rules, the open duration, the overload pressure. Transitions are
 * lazy: decided on the next call or read, never by a timer.
 *
 * Not exported: reach a breaker through `Breaker`. (Not tagged internal
 * either: the published `Breaker` type extends it, so it must stay in the
 * declarations; its internal members are tagged one by one.)
 */
export abstract class BreakerMachine {
  /** @internal A child's name is derived from its family's and its key, when asked: one string less per target. */
  protected readonly ownName: string | undefined;
  /** For a child of a per-key family: the family's breaker. */
  readonly parent: BreakerMachine | undefined;
  /** For a child of a per-key family: its target's key. */
  readonly key: string | undefined;
  /** The options in force, after defaults and validation. */
  readonly config: ResolvedBreakerOptions;

  /** @internal The clock, random source, coordinator and error reporter, shared with every breaker made from the same deps. */
  readonly env: BreakerEnvironment;
  /** @internal */
  window: OutcomeWindow;
  /** @internal */
  readonly counters = new BreakerCounters();
  /** @internal */
  hub: BreakerEventHub | undefined = undefined;
  /** @internal Whether calls must be timed: slow-call detection, a time window, or listeners that want durations. */
  timed = false;

  /** @internal The state as last decided. */
  current: StateCode = CLOSED;
  /** @internal */
  protected sinceAt: number;
  /**
   * Wall time minus the monotonic reading, taken at the last transition: times
   * shown to people are the breaker's times plus this, so that a time that came
   * in as wall time (a shared open-until) goes out exactly as it came in.
   *
   * @internal
   */
  protected wallOffset: number;
  /** @internal */
  generation = 0;
  /** @internal When the open period ends (monotonic). */
  openUntilAt = 0;
  /** @internal How many times it reopened in a row. */
  reopens = 0;
  /** @internal */
  consecutiveFailures = 0;
  /** @internal Only once something went wrong: the last failure and transition, and the hook faults reported. */
  protected evidence: BreakerEvidence | undefined = undefined;
  /** @internal Only while the dependency reports overload: its pause and the evidence client-side throttling sheds by. */
  overload: OverloadPressure | undefined = undefined;
  /** @internal Only while half-open: the probe budget in use. */
  round: HalfOpenRound | undefined = undefined;

  /** @internal For a per-key family: its children, as far as transitions concern them. */
  readonly keyed: FamilyTransitions | undefined;
  /** @internal When the family last handed this child out. */
  lastUsedAt = 0;

  /** @internal */
  protected constructor(
    name: string | undefined,
    lineage: { parent: BreakerMachine; key: string } | undefined,
    config: ResolvedBreakerOptions,
    env: BreakerEnvironment,
    keyed: ((owner: BreakerMachine) => FamilyTransitions) | undefined,
  ) {
    this.ownName = name;
    this.parent = lineage?.parent;
    this.key = lineage?.key;
    this.config = config;
    this.env = env;
    this.keyed = keyed?.(this);
    const now = env.monotonic();
    this.window = windowOf(config, now);
    this.sinceAt = now;
    this.wallOffset = env.clock.now() - now;
  }

  /** Names the breaker in errors, events, logs and metrics; a child of a family is `family[key]`. */
  get name(): string {
    return this.ownName ?? `${this.parent!.name}[${this.key}]`;
  }

  /** The breaker's time source: wall time for timestamps, and the monotonic reading durations run on. */
  get clock(): Clock {
    return this.env.clock;
  }

  /** @internal The reading every duration runs on (see `Clock`): layers that age things with the breaker use it too. */
  monotonic(): number {
    return this.env.monotonic();
  }

  /**
   * The state as last decided, without the transitions time has made due since:
   * for a coordinator or a family that must look without making one happen.
   */
  get lastDecidedState(): BreakerState {
    return stateName(this.current);
  }

  /** @internal While `force()` holds the breaker: the force. */
  get forcing(): Forcing | undefined {
    return this.evidence?.forced;
  }

  /** @internal When the dependency's `Retry-After` pause ends (monotonic); 0 for none. */
  get pausedUntil(): number {
    return this.overload?.pausedUntil ?? 0;
  }

  /**
   * @internal What the state decides for a call arriving at `now`, changing
   * nothing: a transition time has made due is reflected, not made.
   */
  decide(now: number): AdmissionDecision {
    return behaviorOf(this.current).decide(this, now);
  }

  // ---------------------------------------------------------------------------
  // Evidence

  /** @internal A listener threw: reported once per event. */
  onListenerFault(event: BreakerEventName, fault: unknown): void {
    this.reportFault(
      `on('${event}')`,
      new BreakerHookError(breakerMessages.listenerThrew(this.name, event, fault), fault),
    );
  }

  /** @internal */
  noteFailure(failure: unknown, category: FailureCategory | 'overload'): void {
    (this.evidence ??= new BreakerEvidence()).noteFailure(failure, category);
  }

  /** @internal A number in [0, 1) from the breaker's random source, checked (jitter, shedding, a retry's jitter). */
  abstract draw(): number;

  /** @internal Reports the first fault of each source; the later ones would only repeat it. */
  reportFault(source: string, error: Error): void {
    if (!(this.evidence ??= new BreakerEvidence()).firstFaultOf(source)) return;
    try {
      this.env.reportError(error);
    } catch {
      // A reporter that throws has nowhere left to report to; the call must still settle.
    }
  }

  /**
   * @internal Puts `config` in force, keeping the state, the counters, the
   * streak and the window when the new window has the same shape; returns
   * what it had to start afresh. Calls in flight keep the options they were
   * admitted under (their deadline, and a half-open round its budget).
   */
  protected applyConfig(config: ResolvedBreakerOptions): ReconfigurationReset[] {
    const previous = this.config;
    const reset: ReconfigurationReset[] = [];
    (this as { config: ResolvedBreakerOptions }).config = config;
    if (!sameWindow(previous.window, config.window)) {
      this.window = windowOf(config, this.monotonic());
      reset.push('window');
    }
    if (config.overloadK === 0 && this.overload?.throttle !== undefined) {
      this.overload.endEvidence();
      if (this.overload.spent) this.overload = undefined;
      reset.push('overload');
    }
    return reset;
  }

  // ---------------------------------------------------------------------------
  // Control by hand (the public methods are Breaker's: a family passes them to its children first)

  /** @internal `reset()`: closed, with an empty window, no backoff, no pause and no force. */
  protected resetToClosed(): void {
    const now = this.monotonic();
    this.overload = this.overload?.afterReset();
    if (this.evidence !== undefined) this.evidence.forced = undefined;
    if (this.current !== CLOSED) {
      this.transition(CLOSED, 'reset', now, undefined);
      return;
    }
    this.generation++;
    this.window.reset();
    this.consecutiveFailures = 0;
    this.reopens = 0;
  }

  /** @internal `force()`, checked: hold the breaker until `unhold()` or the force's end. */
  protected hold(forcing: Forcing, now: number): void {
    (this.evidence ??= new BreakerEvidence()).forced = forcing;
    const to =
      forcing.state === 'open' ? ISOLATED : forcing.state === 'disabled' ? DISABLED : METRICS_ONLY;
    this.transition(to, 'forced', now, undefined);
  }

  /** @internal `release()`: back to closed (reason `released`), if forced. */
  protected unhold(): void {
    if (this.evidence?.forced === undefined) return;
    this.evidence.forced = undefined;
    this.transition(CLOSED, 'released', this.monotonic(), undefined);
  }

  // ---------------------------------------------------------------------------
  // Transitions

  /** @internal Enough children are unhealthy: a closed family opens (reason `open-ratio`). */
  openForChildren(now: number, children: ChildrenEvidence): void {
    if (this.current === CLOSED)
      this.transition(OPEN, 'open-ratio', now, undefined, undefined, undefined, children);
  }

  /**
   * Opens the breaker until `openUntil` because other replicas found the
   * dependency broken (reason `shared-open`). Only a closed or half-open
   * breaker adopts; a later `openUntil` extends an open one.
   */
  adoptOpen(openUntil: number): void {
    if (openUntil <= this.env.clock.now()) return;
    if (this.current === OPEN) {
      // Replicas share wall times; the breaker keeps its own on the monotonic reading.
      const until = openUntil - this.wallOffset;
      if (until > this.openUntilAt) this.openUntilAt = until;
      return;
    }
    if (this.current !== CLOSED && this.current !== HALF_OPEN) return;
    this.transition(OPEN, 'shared-open', this.monotonic(), undefined, openUntil);
  }

  /**
   * Closes an open or half-open breaker because the fleet's probe succeeded
   * elsewhere (reason `shared-close`), dated `closedAt` (wall time) when the
   * store says when the fleet closed: a slow start then ramps from the fleet's
   * close time, as on every replica. Never dated before the breaker's own
   * opening, nor in the future.
   */
  adoptClosed(closedAt?: number): void {
    if (this.current !== OPEN && this.current !== HALF_OPEN) return;
    const now = this.monotonic();
    const at =
      closedAt === undefined
        ? now
        : Math.max(this.sinceAt, Math.min(now, closedAt - (this.env.clock.now() - now)));
    this.transition(CLOSED, 'shared-close', at, undefined);
  }

  /**
   * Makes the transitions that time alone has made due. Only an admission
   * (`admitting`) asks a coordinator for the fleet's probe permit: a health
   * check, a scrape or a snapshot must never take the fleet's probe.
   *
   * @internal
   */
  protected refresh(now: number, admitting: boolean): void {
    if (this.current >= ISOLATED) this.releaseIfDue(now);
    this.halfOpenIfDue(now, admitting);
    if (this.current !== HALF_OPEN) return;
    this.expireProbes(now);
    // A probe that expired long ago reopened the breaker long ago: that open period may be over too.
    this.halfOpenIfDue(now, admitting);
  }

  /** A force with an end ends by itself, dated when it was due. */
  private releaseIfDue(now: number): void {
    const forced = this.evidence?.forced;
    if (forced?.until === undefined || now < forced.until) return;
    this.evidence!.forced = undefined;
    this.transition(CLOSED, 'released', forced.until, undefined, undefined, forced.untilWall);
  }

  private halfOpenIfDue(now: number, admitting: boolean): void {
    const coordinator = this.env.coordinator;
    if (
      this.current === OPEN &&
      now >= this.openUntilAt &&
      (coordinator === undefined || (admitting && coordinator.mayProbe(this)))
    ) {
      // Dated when it was due, not when someone first looked: `since` and time in state stay true for an idle breaker.
      // With a coordinator it was due when the fleet's probe permit came, which is now.
      this.transition(
        HALF_OPEN,
        'open-duration-elapsed',
        coordinator === undefined ? this.openUntilAt : now,
        undefined,
      );
    }
  }

  /** A probe still unsettled after `halfOpen.maxWaitMs` counts as failed, so a hung probe cannot wedge the breaker. */
  private expireProbes(now: number): void {
    let round: HalfOpenRound | undefined;
    let record;
    while ((round = this.round) !== undefined && (record = round.takeExpired(now)) !== undefined) {
      const maxWait = round.maxWaitMs;
      const error = new CallTimeoutError(
        this.name,
        maxWait,
        breakerMessages.probeExpired(this.name, maxWait),
      );
      record.call?.abandon(error);
      this.counters.rare.timeouts++;
      this.counters.fail('timeout');
      this.noteFailure(error, 'timeout');
      this.hub?.emit('timeout', { timeoutMs: maxWait, probe: true });
      this.hub?.emit('failure', {
        error,
        category: 'timeout',
        durationMs: now - record.startedAt,
        probe: true,
      });
      this.counters.rare.probesFailed++;
      const hopeless = round.fail();
      this.hub?.emit('probe', { result: 'failed' });
      if (hopeless) this.transition(OPEN, 'probe-expired', record.startedAt + maxWait, undefined);
    }
  }

  /** @internal */
  transition(
    to: StateCode,
    reason: TransitionReason,
    now: number,
    retryAfterHint: number | undefined,
    adoptedOpenUntil?: number,
    /** The wall time the transition is dated (events, replicas), when it came in as one: a force's end. */
    datedAt?: number,
    children?: ChildrenEvidence,
  ): void {
    const from = this.current;
    const ramp = guardOf(this)?.ramp;
    // A recovery that did not hold, by whichever rule, is a failed probe as far as backoff goes: the open period grows.
    if (ramp !== undefined && to === OPEN && from === CLOSED && !ramp.ended(now))
      this.reopens = ramp.reopens + 1;
    const reopens = this.reopens;
    const proof = (this.evidence ??= new BreakerEvidence()).noteTransition(
      from,
      to,
      reason,
      now,
      this.window,
      this.consecutiveFailures,
      children,
    );
    this.counters.spend(from, now - this.sinceAt);
    this.current = to;
    this.sinceAt = now;
    // From the current readings: `now` may be when the transition was due, earlier than this moment.
    const toWall = (this.wallOffset = this.env.clock.now() - this.monotonic());
    this.generation++;
    if (this.round !== undefined) abandonProbes(this.round, this.counters, this.hub);
    this.round = undefined;
    this.consecutiveFailures = 0;
    this.openUntilAt = 0;
    // Opening or closing starts the evidence afresh, as it starts the window afresh; a pause the dependency asked for stands.
    if (this.overload !== undefined) {
      this.overload.endEvidence();
      if (this.overload.spent) this.overload = undefined;
    }
    if (to === OPEN) {
      if (from === HALF_OPEN) this.reopens++;
      this.openUntilAt =
        adoptedOpenUntil === undefined
          ? now + openDuration(this.config, this.reopens, this, retryAfterHint)
          : adoptedOpenUntil - toWall;
      this.window.reset();
    } else if (to === HALF_OPEN) {
      this.round = new HalfOpenRound(this.config);
    } else if (to === CLOSED) {
      this.reopens = 0;
      this.window.reset();
    }
    this.parent?.keyed!.childTransitioned(this, stateName(from), stateName(to), now);
    if (this.hub !== undefined || this.env.coordinator !== undefined)
      this.announce(from, to, reason, datedAt ?? now + toWall, toWall, proof);
    // A recovery that closes the breaker starts its slow start; opening starts its recovery probe.
    guardOf(this)?.transitioned(to, reason, now, reopens);
  }

  /** Tells the listeners and the coordinator of a transition, in wall times: people read them, and replicas share them. */
  private announce(
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
      ...(to === OPEN ? { openUntil: this.openUntilAt + toWall } : {}),
      ...proof,
      ...(reason === 'forced' ? { forced: forcedEvent(this.evidence!.forced!) } : {}),
    };
    this.hub?.emit('stateChange', change);
    this.env.coordinator?.transitioned(this, change);
  }
}
