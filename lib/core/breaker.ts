import { snapshotOf } from './snapshot/snapshot-of.js';
import { BreakerCounters } from './snapshot/breaker-counters.js';
import type { BreakerSnapshot } from './snapshot/breaker-snapshot.js';
import {
  environmentOf,
  healthCheckSchedulerOf,
  type BreakerDeps,
  type BreakerEnvironment,
} from './ports/breaker-environment.js';
import type { Clock } from './ports/clock.js';
import { drawFrom, SAFE_DRAW } from './ports/random-draw.js';
import type {
  BreakerEventHub,
  BreakerEventName,
  BreakerListener,
  FallbackEvent,
  ReconfiguredEvent,
  RetryEvent,
} from './events/breaker-events.js';
import { listen, needsTiming } from './events/breaker-listeners.js';
import {
  BreakerFamily,
  FAMILY_OVERFLOW_KEY,
  type FamilyTransitions,
} from './family/breaker-family.js';
import { RareState, type ChildrenEvidence } from './state/rare-state.js';
import {
  CLOSED,
  DISABLED,
  METRICS_ONLY,
  OPEN,
  stateName,
  type BreakerState,
  type CallOutcome,
  type FailureCategory,
  type RejectionReason,
  type StateCode,
  type TransitionReason,
} from './state/breaker-state.js';
import type { AdmissionDecision } from './state/admission-decision.js';
import type { AdmissionPeek } from './state/admission-peek.interface.js';
import { peekAdmission, peekKey, stateRefusal } from './state/admission-peek.js';
import { applyDecision, applyFamilyDecision } from './state/admission.js';
import { behaviorOf } from './state/state-behaviors.js';
import {
  forcingOf,
  type ForcedMode,
  type ForceOptions,
  type Forcing,
} from './state/forced-state.js';
import { transition } from './state/transition.js';
import {
  adoptClosed,
  adoptOpen,
  applyConfig,
  hold,
  openForChildren,
  refreshState,
  resetToClosed,
  unhold,
} from './state/state-machine.js';
import {
  BreakerHookError,
  createRejection,
  type CallTimeoutError,
  type CallRejectedError,
} from './errors/breaker.errors.js';
import { breakerMessages } from './errors/breaker.messages.js';
import { defaultClassifyResult } from './classify/classify.js';
import { classifyWith } from './classify/guarded-classifier.js';
import type { BreakerOptions } from './options/breaker-options.js';
import { configFor } from './options/config-cache.js';
import { reconfigured } from './options/reconfiguration.js';
import type { ResolvedBreakerOptions } from './options/resolve-options.js';
import type { HalfOpenRound } from './recovery/half-open-round.js';
import type { HealthCheckScheduler } from './recovery/health-check-scheduler.js';
import type { Bulkhead } from './overload/bulkhead.js';
import type { OverloadPressure } from './overload/overload-pressure.js';
import { isAbortSignal } from './calls/abort-signal.js';
import type { BreakerParts } from './calls/breaker-parts.js';
import { EXECUTE, MAY_WAIT, type Admit } from './calls/call-pipeline.js';
import { permitOf, runFunction, runMethod } from './calls/call-entries.js';
import { callDeadlineOf, withDeadline } from './calls/call-deadline.js';
import { isObserved, observeCall, observePermit } from './calls/observed-call.js';
import { runPlain } from './calls/plain-run.js';
import { pipelineOf } from './calls/pipeline-of.js';
import { admitCall } from './calls/admit-call.js';
import { NOT_TIMED } from './calls/call-tokens.js';
import { TrackedCall } from './calls/tracked-call.js';
import type { DeadlineScheduler } from './calls/deadline-scheduler.js';
import { refitParts } from './calls/parts-of.js';
import { evaluateTrip, settleCall } from './calls/settlement.js';
import type { CallPermit, ProtectedCall, WithSignal } from './calls/tracked-call.js';
import type { FaultInjectionOptions, InjectedFault } from './faults/fault-injection.js';
import { holdFault, injectFault } from './faults/fault-holding.js';
import type { OutcomeWindow } from './window/outcome-window.interface.js';
import { SLOT_SUCCESS } from './window/outcome-window.interface.js';
import { windowOf } from './window/window-of.js';
import { publishRejection } from './ports/channel-messages.js';

/** @publicApi */
export interface ExecuteOptions {
  /** The caller's signal: aborting it aborts the call, which is then `ignored`. */
  signal?: AbortSignal;
  /**
   * This call's deadline in milliseconds, instead of the breaker's
   * `timeoutMs` (longer or shorter); on a probe, the shorter of it and the
   * probe's. `false` (no deadline) is accepted only by a breaker built with
   * `timeoutMs: false`: a call may change the breaker's deadline, not remove it.
   */
  timeoutMs?: number | false;
}

/**
 * A circuit breaker: closed, open, half-open (plus isolated, metrics-only and
 * disabled, held by hand), in front of one dependency and operation.
 *
 * Transitions are lazy: they are decided on the next call or read, never by a
 * timer, so a breaker costs nothing while idle and behaves deterministically
 * under an injected clock. Every call does O(1) work.
 *
 * @publicApi
 */
export class Breaker {
  /** @internal A child's name is derived from its family's and its key, when asked: one string less per target. */
  readonly ownName: string | undefined;
  /** For a child of a per-key family: the family's breaker. */
  readonly parent: Breaker | undefined;
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
  sinceAt: number;
  /**
   * Wall time minus the monotonic reading, taken at the last transition: times
   * shown to people are the breaker's times plus this, so that a time that came
   * in as wall time (a shared open-until) goes out exactly as it came in.
   *
   * @internal
   */
  wallOffset: number;
  /** @internal */
  generation = 0;
  /**
   * @internal The token of the first call admitted in this generation: a call's
   * token is its admission number (`counters.admitted` when it was admitted), so
   * a token below it belongs to an earlier generation.
   */
  generationStart = 0;
  /**
   * @internal The token of the current (or last) streak's first failing call,
   * never below `generationStart`: only calls admitted from it on end or extend
   * the streak, and only their successes take the closed fast path.
   */
  streakStart = 0;
  /** @internal When the open period ends (monotonic). */
  openUntilAt = 0;
  /** @internal How many times it reopened in a row. */
  reopens = 0;
  /** @internal */
  consecutiveFailures = 0;
  /** @internal Whether every failure of the current streak said the dependency could not be reached. */
  streakUnreachable = false;
  /** @internal What only some breakers need (the last failure and transition, hook errors reported, a force, an injected fault), made when first needed. */
  rare: RareState | undefined = undefined;
  /** @internal Only while the dependency reports overload: its pause and the evidence client-side throttling sheds by. */
  overload: OverloadPressure | undefined = undefined;
  /** @internal Only while half-open: the probe budget in use. */
  round: HalfOpenRound | undefined = undefined;

  /** @internal For a per-key family: its children, as far as transitions concern them. */
  readonly keyed: BreakerFamily<Breaker> | undefined;
  /** @internal When the family last handed this child out. */
  lastUsedAt = 0;
  /** @internal The stages its calls go through, assembled once per configuration (see `calls/pipeline-of.ts`). */
  pipeline: Admit;

  constructor(name: string, options?: BreakerOptions, deps?: BreakerDeps);
  /** @internal A child of a per-key family: its family's options and environment, and its key. */
  constructor(
    name: string,
    options: BreakerOptions | undefined,
    deps: BreakerDeps | undefined,
    lineage: { parent: Breaker; key: string },
  );
  constructor(
    name: string,
    options?: BreakerOptions,
    deps?: BreakerDeps,
    lineage?: { parent: Breaker; key: string },
  ) {
    if (typeof name !== 'string' || name === '') throw new TypeError(breakerMessages.badName(name));
    // Children share their family's validated options and environment: creating one is cheap.
    const config = lineage === undefined ? configFor(name, options) : lineage.parent.config;
    const env = lineage === undefined ? environmentOf(name, deps) : lineage.parent.env;
    this.ownName = lineage === undefined ? name : undefined;
    this.parent = lineage?.parent;
    this.key = lineage?.key;
    this.config = config;
    this.env = env;
    this.pipeline =
      lineage === undefined ? pipelineOf(config, env.faultInjection) : lineage.parent.pipeline;
    this.keyed =
      config.perKey === undefined || lineage !== undefined
        ? undefined
        : new BreakerFamily<Breaker>(
            this,
            (key) => new Breaker(`${name}[${key}]`, undefined, deps, { parent: this, key }),
          );
    const now = env.monotonic();
    this.window = windowOf(config, now);
    this.sinceAt = now;
    this.wallOffset = env.clock.now() - now;
    this.timed = needsTiming(this);
    refitParts(this, config);
    // A child born (or born again after eviction) while its family lets every call through is forced alike.
    // Forced open needs nothing of the child: the family's gate rejects every key.
    const forced = lineage?.parent.rare?.forced;
    if (forced !== undefined && forced.state !== 'open') hold(this, forced, now);
    const faults = lineage?.parent.rare?.faults;
    if (faults !== undefined) holdFault(this, faults);
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
    return this.rare?.forced;
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
  onListenerError(event: BreakerEventName, fault: unknown): void {
    this.reportHookError(
      `on('${event}')`,
      new BreakerHookError(breakerMessages.listenerThrew(this.name, event, fault), fault),
    );
  }

  /** @internal */
  noteFailure(failure: unknown, category: FailureCategory | 'overload'): void {
    (this.rare ??= new RareState()).noteFailure(failure, category);
  }

  /** @internal A number in [0, 1) from the breaker's random source, checked (jitter, shedding, a retry's jitter). */

  /** @internal Reports the first fault of each source; the later ones would only repeat it. */
  reportHookError(source: string, error: Error): void {
    if (!(this.rare ??= new RareState()).firstHookErrorOf(source)) return;
    try {
      this.env.reportError(error);
    } catch {
      // A reporter that throws has nowhere left to report to; the call must still settle.
    }
  }

  /**
   * @internal Puts `config` in force, keeping the state, the counters, the
  // ---------------------------------------------------------------------------
  // Transitions (state/state-machine.ts, state/transition.ts)

  /** @internal Moves to `to`: see `transition()` in state/transition.ts. */
  transition(
    to: StateCode,
    reason: TransitionReason,
    now: number,
    retryAfterHint: number | undefined,
    adoptedOpenUntil?: number,
    datedAt?: number,
    children?: ChildrenEvidence,
  ): void {
    transition(this, to, reason, now, retryAfterHint, adoptedOpenUntil, datedAt, children);
  }

  /** @internal Makes the transitions time alone has made due (`admitting`: may take the fleet's probe permit). */
  refresh(now: number, admitting: boolean): void {
    refreshState(this, now, admitting);
  }

  /** @internal Enough children are unhealthy: a closed family opens (reason `open-ratio`). */
  openForChildren(now: number, children: ChildrenEvidence): void {
    openForChildren(this, now, children);
  }

  /**
   * Opens the breaker until `openUntil` because other replicas found the
   * dependency broken (reason `shared-open`). Only a closed or half-open
   * breaker adopts; a later `openUntil` extends an open one.
   */
  adoptOpen(openUntil: number): void {
    adoptOpen(this, openUntil);
  }

  /**
   * Closes an open or half-open breaker because the fleet's probe succeeded
   * elsewhere (reason `shared-close`), dated `closedAt` (wall time) when the
   * store says when the fleet closed: a slow start then ramps from the fleet's
   * close time, as on every replica. Never dated before the breaker's own
   * opening, nor in the future.
   */
  adoptClosed(closedAt?: number): void {
    adoptClosed(this, closedAt);
  }

  /**
   * The child breaker of one target (host, endpoint, tenant) of a per-key
   * family, created from the family's options on first use.
   */
  forKey(key: string): Breaker {
    if (this.keyed === undefined) throw new TypeError(breakerMessages.notPerKey(this.name));
    return this.keyed.child(key);
  }

  /** The children a per-key family holds now (none for a plain breaker). */
  children(): IterableIterator<Breaker> {
    return this.keyed?.all() ?? [][Symbol.iterator]();
  }

  /** Calls `listener` with every child a per-key family creates from now on; returns the unsubscribe function. */
  onChild(listener: (child: Breaker) => void): () => void {
    if (this.keyed === undefined) return () => undefined;
    return this.keyed.onChild(listener);
  }

  /** Calls `listener` with every child a per-key family evicts from now on; returns the unsubscribe function. */
  onEvict(listener: (child: Breaker) => void): () => void {
    if (this.keyed === undefined) return () => undefined;
    return this.keyed.onEvict(listener);
  }

  /** Subscribes to an event; returns the function that unsubscribes. */
  on<E extends BreakerEventName>(event: E, listener: BreakerListener<E>): () => void {
    return listen(this, event, listener);
  }

  /**
   * Makes this breaker's calls see a fault instead of the dependency's answer
   * (failures, latency, overload; every call or a share), until `remove()` on
   * the result: for tests and game days, to watch fallbacks, 503s and
   * readiness without breaking the dependency. Refused unless the breaker was
   * built with `faultInjection: true`. It replaces the fault injected before,
   * outlives `reset()` and transitions, and a family injects it into every
   * child, present and future. Costs the closed path nothing while none is.
   */
  injectFault(fault: FaultInjectionOptions): InjectedFault {
    return injectFault(this, fault);
  }

  /** The current state, after any transition that time alone has made due. */
  get state(): BreakerState {
    this.refresh(this.monotonic(), false);
    return stateName(this.current);
  }

  // ---------------------------------------------------------------------------
  // Running calls

  /**
   * Runs `fn` through the breaker. Rejects with `CallRejectedError`, without
   * calling `fn`, when the breaker does not admit the call (on the next
   * microtask: see `deferredRejection`); otherwise settles as `fn` does, or
   * with `CallTimeoutError` after `timeoutMs`, or with the caller's abort reason.
   */
  execute<T>(fn: ProtectedCall<T>, options?: ExecuteOptions): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError(breakerMessages.notAFunction(this.name, fn));
    if (this.keyed !== undefined)
      throw new TypeError(breakerMessages.familyMisuse(this.name, 'execute'));
    // Kept short enough for V8 to inline into its caller (bytecode under 460 bytes): a call
    // with options, or one somebody observes, takes `executeWith()`.
    if (options !== undefined || isObserved(this.env.calls)) return this.executeWith(fn, options);
    const pipeline = this.pipeline;
    // The closed fast path, inline: no stage in the pipeline, closed, no overload pressure.
    if (pipeline === admitCall && this.current === CLOSED && this.overload === undefined) {
      const token = this.counters.admitted++;
      if (this.config.timeoutMs === undefined) return runPlain(this, fn, token);
      return new TrackedCall<T>(this, token, this.timed ? this.monotonic() : NOT_TIMED).run(
        fn,
        undefined,
      );
    }
    const admission = pipeline<T>(this, undefined, EXECUTE);
    return typeof admission === 'number'
      ? runPlain(this, fn, admission)
      : runFunction(this, admission, fn, undefined);
  }

  /** `execute()` with options (a signal, a deadline of the call's own), or observed on the call channels. */
  private executeWith<T>(fn: ProtectedCall<T>, options: ExecuteOptions | undefined): Promise<T> {
    const signal = options?.signal;
    if (signal !== undefined) {
      // Checked before admission: a bad signal found later would leak the admission (a probe permit included).
      if (!isAbortSignal(signal))
        throw new TypeError(breakerMessages.invalidSignal(this.name, signal));
      if (signal.aborted) return Promise.reject(signal.reason);
    }
    const calls = this.env.calls;
    if (isObserved(calls)) return observeCall(this, fn, signal, options?.timeoutMs, calls);
    const given = options?.timeoutMs;
    if (given !== undefined) return this.executeWithin(fn, signal, given);
    const pipeline = this.pipeline;
    if (pipeline === admitCall && this.current === CLOSED && this.overload === undefined) {
      const token = this.counters.admitted++;
      if (signal === undefined && this.config.timeoutMs === undefined)
        return runPlain(this, fn, token);
      const startedAt = this.timed ? this.monotonic() : NOT_TIMED;
      return new TrackedCall<T>(this, token, startedAt).run(fn, signal);
    }
    return runFunction(this, pipeline<T>(this, signal, EXECUTE), fn, signal);
  }

  /** `execute()` with a deadline of the call's own: never the plain path, whose calls have none. */
  private executeWithin<T>(
    fn: ProtectedCall<T>,
    signal: AbortSignal | undefined,
    given: number | false,
  ): Promise<T> {
    const timeoutMs = callDeadlineOf(this, given, 'execute');
    const admission = withDeadline(this.pipeline<T>(this, signal, MAY_WAIT), timeoutMs);
    return runFunction(this, admission, fn, signal);
  }

  /**
   * @internal `execute()` for a decorated method: `method.apply(thisArg, args)`
   * without a closure per call on the plain path. A call that needs a signal
   * (a deadline, a probe, a family probe) goes through `withSignal`, which
   * hands the signal to the method its own way.
   */
  executeMethod<T>(
    method: (...args: any[]) => T | PromiseLike<T>,
    thisArg: unknown,
    args: unknown[],
    withSignal: WithSignal<T>,
  ): Promise<T> {
    if (this.keyed !== undefined)
      throw new TypeError(breakerMessages.familyMisuse(this.name, 'execute'));
    return runMethod(
      this,
      this.pipeline<T>(this, undefined, EXECUTE),
      method,
      thisArg,
      args,
      withSignal,
    );
  }

  /**
   * Admits one call that the caller will run and settle itself, or throws
   * `CallRejectedError`. Settle it with `succeed`/`fail`/`timeOut`/`release`, or
   * hand it the call's promise with `track()` to get the breaker's deadline and
   * classification. A probe that is never settled still expires after
   * `halfOpen.maxWaitMs`. `options.timeoutMs` is the call's own deadline, as
   * for `execute()`.
   */
  acquire<T = unknown>(options?: Pick<ExecuteOptions, 'timeoutMs'>): CallPermit<T> {
    if (this.keyed !== undefined)
      throw new TypeError(breakerMessages.familyMisuse(this.name, 'acquire'));
    const given = options?.timeoutMs;
    const calls = this.env.calls;
    if (isObserved(calls)) return observePermit<T>(this, given, calls);
    if (given === undefined) return permitOf(this.pipeline<T>(this, undefined, 0)) as CallPermit<T>;
    const timeoutMs = callDeadlineOf(this, given, 'acquire');
    return permitOf(withDeadline(this.pipeline<T>(this, undefined, 0), timeoutMs)) as CallPermit<T>;
  }

  /**
   * @internal `acquire()` for a caller that can wait (a decorated Promise
   * method with a fallback): past a full bulkhead it waits in the queue as
   * `execute()` does, and the permit comes as a promise (rejected as `execute()` would be).
   */
  acquireWaiting<T = unknown>(): CallPermit<T> | Promise<CallPermit<T>> {
    if (this.keyed !== undefined)
      throw new TypeError(breakerMessages.familyMisuse(this.name, 'acquire'));
    return permitOf(this.pipeline<T>(this, undefined, MAY_WAIT));
  }

  /**
   * Whether a call made now would be admitted, and if not why, without
   * admitting one: no probe permit is taken, no call counted, no event emitted
   * and no transition made (a due one is reflected, not made). A bulkhead
   * with no free slot and a full queue rejects (`bulkhead-full`), as the call
   * would be. Three answers are estimates, since only a real admission can
   * decide them: client-side throttling and a slow start (`rampUp`) shed at
   * random (peek answers permitted), and a breaker that shares its state
   * asks the fleet for its probe permit only when a call comes (peek answers
   * permitted once the open duration is over). On a per-key family, it
   * answers for the family's own gate: ask `forKey(key).peek()` for one target.
   */
  peek(): AdmissionPeek {
    return peekAdmission(this);
  }

  /**
   * On a per-key family: `forKey(key).peek()` without creating the child (so
   * without evicting another). A key the full family would send to its
   * overflow child is answered by that child; another key the family does not
   * hold would get a new closed child behind the family's gate, and is answered so.
   */
  peekKey(key: string): AdmissionPeek {
    if (this.keyed === undefined) throw new TypeError(breakerMessages.notPerKey(this.name));
    return peekKey(this, this.keyed, key);
  }

  /** Whether a call made now would be admitted: `peek().permitted`, with the same guarantees. */
  isCallPermitted(): boolean {
    return peekAdmission(this).permitted;
  }

  /**
   * @internal Before a call waits for a bulkhead slot (none is free): the
   * rejection the state gives it now, counted and announced by the breaker
   * that refuses (this one, or its family), as its admission would; none when
   * it may be admitted. What `peek()` answers refused, a call is refused.
   */
  stateRefusal(): CallRejectedError | undefined {
    return stateRefusal(this);
  }

  /** @internal Counts a call that a fallback served; the decorator, the interceptor and the operator report theirs. */
  recordFallback(error: unknown, source: FallbackEvent['source']): void {
    this.counters.rare.fallbacks++;
    this.hub?.emit('fallback', { error, source });
  }

  // ---------------------------------------------------------------------------
  // Control

  /** Exactly `force('open', { reason: 'isolate()' })`: every call rejected (state `isolated`) until `release()` or `reset()`. */
  isolate(): void {
    this.force('open', { reason: 'isolate()' });
  }

  /** Exactly `force('disabled', { reason: 'disable()' })`: every call passes, nothing is counted (state `disabled`), until `release()` or `reset()`. */
  disable(): void {
    this.force('disabled', { reason: 'disable()' });
  }

  /** Back to closed with an empty window, no backoff, no pause and no force (a family resets every child too). */
  reset(): void {
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.reset();
    resetToClosed(this);
  }

  /**
   * Holds the breaker in one mode whatever its calls do, until `release()`,
   * `reset()` or `untilMs`, each with a state of its own: `open` (state
   * `isolated`) rejects every call; `metrics-only` lets every call through and
   * counts it without ever tripping (`closed` is its alias); `disabled` lets
   * every call through and counts nothing. The reason (and who set it) shows
   * in snapshots, events, logs and health details. A family forces every
   * child it holds too.
   */
  force(state: ForcedMode | 'closed', options: ForceOptions): void {
    const now = this.monotonic();
    const forcing = forcingOf(this.name, state, options, this.env.clock.now(), now);
    // The family first: children forced open must not look like a failing fleet to its aggregate rule.
    hold(this, forcing, now);
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.force(state, options);
  }

  /** Ends a `force()`: back to closed with an empty window (reason `released`). Nothing happens when nothing is forced. */
  release(): void {
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.release();
    unhold(this);
  }

  /**
   * Puts new options in force without losing the breaker: its state, counters
   * and listeners stay, and its window too when the new one has the same shape
   * (the result says what had to start afresh). Options are checked as the
   * constructor checks them, and nothing changes when they are refused. Calls
   * in flight finish under the options they were admitted with. A family
   * applies them to every child. `perKey` and `share` cannot change.
   */
  reconfigure(options: BreakerOptions): ReconfiguredEvent {
    if (this.parent !== undefined)
      throw new TypeError(breakerMessages.reconfigureChild(this.name, this.parent.name));
    const previous = this.config;
    const current = reconfigured(this.name, previous, options);
    const reset = applyConfig(this, current);
    this.pipeline = pipelineOf(current, this.env.faultInjection);
    refitParts(this, current);
    this.counters.rare.reconfigurations++;
    this.timed = needsTiming(this);
    if (this.keyed !== undefined)
      for (const child of this.keyed.all()) {
        applyConfig(child, current);
        child.pipeline = this.pipeline;
        refitParts(child, current);
        child.timed = needsTiming(child);
      }
    const event: ReconfiguredEvent = { previous, current, reset };
    this.hub?.emit('reconfigured', event);
    return event;
  }

  /** Drops every listener, and stops its health check. The breaker holds no timer or handle of its own. */
  dispose(): void {
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.dispose();
    this.hub?.clear();
    this.hub = undefined;
    this.timed = needsTiming(this);
    this.rare?.parts?.dispose();
  }

  /**
   * Takes back what `adoptOpen()` extended an open breaker's period by (a
   * coordinator found the signal that extended it forged): it ends at
   * `openUntil` (wall time) again. Never lengthens it; any other state stays.
   *
   * @internal
   */
  restoreOpenUntil(openUntil: number): void {
    const until = openUntil - this.wallOffset;
    if (this.current === OPEN && until < this.openUntilAt) this.openUntilAt = until;
  }

  snapshot(): BreakerSnapshot {
    return snapshotOf(this);
  }

  /** @internal Where the breaker's per-call deadlines wait (see `Clock.setTimer`). */
  get deadlines(): DeadlineScheduler {
    return this.env.deadlines;
  }

  // ---------------------------------------------------------------------------
  // Admission

  /** @internal A token (the admission number; a negative probe id for probes), the rejection, or an admission with a fault. */
  admitOwn(): number | CallRejectedError {
    if (this.current === CLOSED) {
      // Without overload pressure, the plain path itself has nothing more to check (injected faults are a stage of their own).
      if (this.overload === undefined) return this.counters.admitted++;
      return applyDecision(this, this.monotonic());
    }
    const now = this.monotonic();
    this.refresh(now, true);
    return applyDecision(this, now);
  }

  /** @internal A family's own gate for a child's call: 0 to pass, a probe token, or the rejection. */
  admitAsFamily(): number | CallRejectedError {
    const now = this.monotonic();
    this.refresh(now, true);
    return applyFamilyDecision(this, now);
  }

  /** @internal Rejects a call (the state's rejection, or a stage's: `bulkhead-full`, `ramp-up`): counted and announced. */
  reject(reason: RejectionReason, retryAfterMs: number | undefined): CallRejectedError {
    const error = createRejection(
      this.name,
      stateName(this.current),
      reason,
      retryAfterMs,
      this.rare?.lastFailure,
    );
    this.counters.reject(reason);
    this.hub?.emit('rejected', { reason, error });
    const channel = this.env.channels?.rejected;
    if (channel?.hasSubscribers === true)
      publishRejection(channel, this.name, stateName(this.current), reason, retryAfterMs, error);
    return error;
  }

  /**
   * @internal Takes back an admission that turned out not to be a call (a
   * decorated method that returned an Observable: its subscriptions are the calls).
   */
  withdrawAdmission(token: number): void {
    // Not taken off `admitted`: that numbers the calls, and must only grow.
    this.counters.rare.withdrawn++;
    const round = this.round;
    if (token >= 0 || round === undefined || !round.remove(-token)) return;
    round.admitted--;
    this.counters.rare.probesAdmitted--;
  }

  /** @internal Lets a probe's call object be told when the probe expires. */
  attachProbe(id: number, call: { abandon(error: CallTimeoutError): void }): void {
    this.round?.attach(id, call);
  }

  // ---------------------------------------------------------------------------
  // Settlement

  /** @internal Counts a call that resolved with `value`, judged by `config` (the options it started under); returns how it counted. */
  settleValue(
    token: number,
    value: unknown,
    startedAt: number,
    config: ResolvedBreakerOptions = this.config,
  ): CallOutcome {
    // The common case in full, without the general bookkeeping: a success of the
    // current closed generation that nobody times (no duration listeners, no slow
    // calls, no time window) or classifies by hand.
    if (
      // At least the streak's start, so at least the generation's: the general path handles the rest.
      token >= this.streakStart &&
      this.current === CLOSED &&
      !this.timed &&
      this.overload === undefined &&
      config.classifyResult === undefined &&
      (typeof value !== 'object' ||
        value === null ||
        defaultClassifyResult(value, config.overloadK !== 0) === 'success')
    ) {
      this.counters.successes++;
      this.consecutiveFailures = 0;
      const w = this.window;
      w.record(SLOT_SUCCESS, 0);
      // A success can only trip a window that already holds failures (when it completes the minimum population).
      if (w.failures !== 0) evaluateTrip(this, undefined);
      return 'success';
    }
    const outcome = this.classifyResult(value, config);
    this.settle(token, outcome, value, startedAt, undefined, config);
    return outcome;
  }

  /** @internal Counts a timed-out call: a failure of category `timeout`. */
  settleTimeout(
    token: number,
    error: CallTimeoutError,
    startedAt: number,
    config: ResolvedBreakerOptions = this.config,
  ): void {
    this.counters.rare.timeouts++;
    this.hub?.emit('timeout', { timeoutMs: error.timeoutMs, probe: token < 0 });
    this.settle(token, 'failure', error, startedAt, 'timeout', config);
  }

  /** @internal Counts one settled call, judged by the options it started under; drops its effect on state when it belongs to an older generation. */
  settle(
    token: number,
    outcome: CallOutcome,
    subject: unknown,
    startedAt: number,
    category: FailureCategory | undefined,
    config: ResolvedBreakerOptions = this.config,
  ): void {
    settleCall(this, token, outcome, subject, startedAt, category, config);
  }

  /** @internal How `config` (the options a call started under) counts a call that threw `error`. */
  classifyError(
    error: unknown,
    config: ResolvedBreakerOptions = this.config,
    decided?: 'failure' | 'overload',
  ): CallOutcome {
    return classifyWith(this, 'classify', error, config, decided);
  }

  /** @internal How `config` counts a call that resolved with `value`. */
  classifyResult(value: unknown, config: ResolvedBreakerOptions = this.config): CallOutcome {
    return classifyWith(this, 'classifyResult', value, config);
  }

  // ---------------------------------------------------------------------------
  // What the stages, the health check, a family and a retry policy ask of the breaker

  /** @internal With the bulkhead, rampUp or healthCheck option: what the breaker keeps of them (in its rare state). */
  get parts(): BreakerParts | undefined {
    return this.rare?.parts;
  }

  /** @internal The bulkhead in front of admission, if any (what `peek()` reads of it). */
  get bulkheadSlots(): Bulkhead | undefined {
    return this.rare?.parts?.bulkhead;
  }

  /** @internal Forced `disabled`: every call is let through uncounted, past the bulkhead too. */
  get lettingAllThrough(): boolean {
    return this.rare?.forced?.state === 'disabled';
  }

  /** @internal A retry policy's attempt, scheduled or refused by the budget: counted and announced. */
  recordRetry(event: RetryEvent): void {
    if (event.result === 'scheduled') this.counters.rare.retries++;
    else this.counters.rare.retriesDenied++;
    this.hub?.emit('retry', event);
  }

  /** @internal The scheduler of this breaker's health check: its registry's. */
  healthCheckScheduler(): HealthCheckScheduler {
    return healthCheckSchedulerOf(this.env);
  }

  /**
   * @internal The breaker a new call of this one's target goes to now: this
   * one, or, for a child its family has evicted, its key's child now. A
   * retry's next attempt asks it: the evicted child's bulkhead, idle as it
   * went, had every slot free beside the key's new child's calls.
   */
  rejoined(): Breaker {
    const family = this.parent?.keyed;
    return family === undefined ? this : family.rejoin(this);
  }

  /** @internal A family's child: one of its bulkheads holds and awaits no call any more. */
  bulkheadIdle(): void {
    this.parent!.keyed?.childIdle(this);
  }

  /**
   * @internal How many times `reconfigure()` put options in force (local, fleet
   * or reload): counted as it happens, so a change undone before anyone
   * looks still shows. A family's children run on its options and count none.
   */
  get reconfigurations(): number {
    return this.counters.reconfigurations;
  }

  /** @internal A family's overflow child: its family, which counts each key's calls on it. */
  get overflowCalls(): FamilyTransitions | undefined {
    return this.key === FAMILY_OVERFLOW_KEY ? this.parent!.keyed : undefined;
  }

  /** @internal A family's child: its bulkhead, if calls hold or wait for a slot of it (asked as it is evicted). */
  busyBulkhead(): Bulkhead | undefined {
    const bulkhead = this.rare?.parts?.bulkhead;
    return bulkhead !== undefined && bulkhead.active + bulkhead.queued + bulkhead.rejoining > 0
      ? bulkhead
      : undefined;
  }

  /**
   * @internal A new child of a family takes over the bulkhead its key's evicted
   * child left with calls in it, under the family's limits now: the key's cap
   * holds across eviction. Without a bulkhead of its own (reconfigured away)
   * it has no cap to keep.
   */
  adoptBulkhead(bulkhead: Bulkhead): void {
    const guard = this.rare?.parts;
    const limits = this.config.bulkhead;
    if (guard?.bulkhead === undefined || limits === undefined) return;
    bulkhead.setLimits(limits);
    guard.bulkhead = bulkhead;
  }

  /**
   * @internal A number in [0, 1) from the breaker's random source (jitter,
   * shedding, a retry's jitter). A draw that throws or falls outside [0, 1)
   * counts as `SAFE_DRAW`, reported once (a family's children as the family).
   */
  draw(): number {
    const drawn = drawFrom(this.env.random, this.name, 'deps.random');
    if (typeof drawn === 'number') return drawn;
    (this.parent ?? this).reportHookError('deps.random', drawn);
    return SAFE_DRAW;
  }

  /** @internal Whether this is a child whose family is not closed: its calls pass the family's gate first. */
  underFamilyGate(): boolean {
    const parent = this.parent;
    return (
      parent !== undefined &&
      parent.current !== CLOSED &&
      parent.current !== DISABLED &&
      parent.current !== METRICS_ONLY
    );
  }
}
