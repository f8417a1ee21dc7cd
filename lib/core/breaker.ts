import { assembleSnapshot } from './snapshot/assemble-snapshot.js';
import type { BreakerCoordination } from './ports/breaker-coordinator.interface.js';
import { environmentOf, type BreakerDeps } from './ports/breaker-environment.js';
import type { FallbackEvent, ReconfiguredEvent } from './events/breaker-events.js';
import { BreakerFamily } from './family/breaker-family.js';
import type { BreakerMachine } from './breaker-machine.js';
import { BreakerCalls } from './breaker-calls.js';
import type { AdmissionPeek } from './state/admission-peek.interface.js';
import type { BreakerOptions } from './options/breaker-options.js';
import type { BreakerSnapshot } from './snapshot/breaker-snapshot.js';
import { HALF_OPEN, OPEN, stateName, type BreakerState } from './state/breaker-state.js';
import { breakerMessages } from './errors/breaker.messages.js';
import { configFor } from './options/config-cache.js';
import { reconfigured } from './options/reconfiguration.js';
import { baseOpenDuration } from './state/open-duration.js';
import { isAbortSignal } from './calls/abort-signal.js';
import { pass, passAcquire, passMethod } from './calls/call-routes.js';
import { reguard } from './calls/guard-slot.js';
import { openRetryAfter } from './state/admission.js';
import type { BreakerEventName, BreakerListener } from './events/breaker-events.js';
import { listen, needsTiming } from './events/breaker-listeners.js';
import type { FaultInjectionOptions, InjectedFault } from './faults/fault-injection.js';
import { holdFault, injectFault } from './faults/fault-holding.js';
import type { CircuitOpenError } from './errors/breaker.errors.js';
import { peekAdmission, peekKey, stateRefusal } from './state/admission-peek.js';
import {
  forcedSnapshot,
  forcingOf,
  type ForceableState,
  type ForceOptions,
} from './state/forced-state.js';
import { type WithSignal, type CallPermit, type ProtectedCall } from './calls/tracked-call.js';

/** @publicApi */
export interface ExecuteOptions {
  /** The caller's signal: aborting it aborts the call, which is then `ignored`. */
  signal?: AbortSignal;
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
export class Breaker extends BreakerCalls {
  /** For a child of a per-key family: the family. */
  declare readonly parent: Breaker | undefined;
  /** @internal */
  declare readonly keyed: BreakerFamily<Breaker> | undefined;

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
    const keyed =
      config.perKey === undefined || lineage !== undefined
        ? undefined
        : (owner: BreakerMachine) =>
            new BreakerFamily<Breaker>(
              owner,
              (key) =>
                new Breaker(`${name}[${key}]`, undefined, deps, { parent: owner as Breaker, key }),
            );
    super(lineage === undefined ? name : undefined, lineage, config, env, keyed);
    this.timed = needsTiming(this);
    reguard(this, config);
    // A child born (or born again after eviction) while its family lets every call through is forced alike.
    // Forced open needs nothing of the child: the family's gate rejects every key.
    const forced = lineage?.parent.evidence?.forced;
    if (forced !== undefined && forced.state !== 'open') this.hold(forced, this.monotonic());
    const faults = lineage?.parent.overload?.faults;
    if (faults !== undefined) holdFault(this, faults);
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
   * Runs `fn` through the breaker. Rejects with `CircuitOpenError`, without
   * calling `fn`, when the breaker does not admit the call (on the next
   * microtask: see `deferredRejection`); otherwise settles as `fn` does, or
   * with `CallTimeoutError` after `timeoutMs`, or with the caller's abort reason.
   */
  execute<T>(fn: ProtectedCall<T>, options?: ExecuteOptions): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError(breakerMessages.notAFunction(this.name, fn));
    const signal = options?.signal;
    if (this.keyed !== undefined)
      throw new TypeError(breakerMessages.familyMisuse(this.name, 'execute'));
    if (signal !== undefined) {
      // Checked before admission: a bad signal found later would leak the admission (a probe permit included).
      if (!isAbortSignal(signal))
        throw new TypeError(breakerMessages.invalidSignal(this.name, signal));
      if (signal.aborted) return Promise.reject(signal.reason);
    }
    return this.guard === undefined ? pass(this, fn, signal) : this.guard.execute(this, fn, signal);
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
    return this.guard === undefined
      ? passMethod(this, method, thisArg, args, withSignal)
      : this.guard.executeMethod(this, method, thisArg, args, withSignal);
  }

  /**
   * Admits one call that the caller will run and settle itself, or throws
   * `CircuitOpenError`. Settle it with `succeed`/`fail`/`timeOut`/`release`, or
   * hand it the call's promise with `track()` to get the breaker's deadline and
   * classification. A probe that is never settled still expires after
   * `halfOpen.maxWaitMs`.
   */
  acquire<T = unknown>(): CallPermit<T> {
    if (this.keyed !== undefined)
      throw new TypeError(breakerMessages.familyMisuse(this.name, 'acquire'));
    return this.guard === undefined ? passAcquire<T>(this) : this.guard.acquire<T>(this);
  }

  /**
   * @internal `acquire()` for a caller that can wait (a decorated Promise
   * method with a fallback): past a full bulkhead it waits in the queue as
   * `execute()` does, and the permit comes as a promise (rejected as `execute()` would be).
   */
  acquireWaiting<T = unknown>(): CallPermit<T> | Promise<CallPermit<T>> {
    if (this.keyed !== undefined)
      throw new TypeError(breakerMessages.familyMisuse(this.name, 'acquire'));
    return this.guard === undefined ? passAcquire<T>(this) : this.guard.acquire<T>(this, true);
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
  stateRefusal(): CircuitOpenError | undefined {
    return stateRefusal(this);
  }

  /** Counts a call that a fallback served; the decorator and the operator report theirs. */
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
    this.resetToClosed();
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
  force(state: ForceableState, options: ForceOptions): void {
    const now = this.monotonic();
    const forcing = forcingOf(this.name, state, options, this.env.clock.now(), now);
    // The family first: children forced open must not look like a failing fleet to its aggregate rule.
    this.hold(forcing, now);
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.force(state, options);
  }

  /** Ends a `force()`: back to closed with an empty window (reason `released`). Nothing happens when nothing is forced. */
  release(): void {
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.release();
    this.unhold();
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
    const reset = this.applyConfig(current);
    reguard(this, current);
    this.counters.rare.reconfigurations++;
    this.timed = needsTiming(this);
    if (this.keyed !== undefined)
      for (const child of this.keyed.all()) {
        child.applyConfig(current);
        reguard(child, current);
        child.timed = needsTiming(child);
      }
    const event: ReconfiguredEvent = { previous, current, reset };
    this.hub?.emit('reconfigured', event);
    return event;
  }

  /** Drops every listener, and stops its recovery probe. The breaker holds no timer or handle of its own. */
  dispose(): void {
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.dispose();
    this.hub?.clear();
    this.hub = undefined;
    this.timed = needsTiming(this);
    this.guard?.dispose();
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
    const now = this.monotonic();
    this.refresh(now, false);
    this.window.refresh(now);
    const state = this.current;
    const snapshot = assembleSnapshot({
      name: this.name,
      key: this.key,
      config: this.config,
      now,
      toWall: this.wallOffset,
      state,
      since: this.sinceAt,
      openUntil: this.openUntilAt,
      pausedUntil: this.overload?.pausedUntil ?? 0,
      openRetryAfter: state === OPEN ? openRetryAfter(this, now) : 0,
      generation: this.generation,
      window: this.window,
      shed: this.overload?.shedInWindow(now) ?? 0,
      round: this.round,
      counters: this.counters,
      evidence: this.evidence,
      family: this.keyed?.snapshot(),
      coordination: this.coordination(),
      forced:
        this.evidence?.forced === undefined
          ? undefined
          : forcedSnapshot(this.evidence.forced, this.wallOffset),
      recovery: this.guard?.snapshot(now, this.wallOffset),
      nextOpenDurationMs: baseOpenDuration(
        this.config,
        state === HALF_OPEN || state === OPEN ? this.reopens + 1 : this.reopens,
      ),
    });
    // A game day's fault shows where people look: dashboards, /breakers endpoints.
    const fault = this.overload?.faults;
    if (fault !== undefined) snapshot.injectedFault = fault.snapshot();
    return snapshot;
  }

  private coordination(): BreakerCoordination | undefined {
    return this.env.coordinator?.coordinationOf?.(this);
  }
}
