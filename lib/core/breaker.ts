import { assembleSnapshot } from './assemble-snapshot.js';
import type { BreakerCoordination } from './breaker-coordinator.interface.js';
import { environmentOf, type BreakerDeps } from './breaker-environment.js';
import type { FallbackEvent, ReconfiguredEvent } from './breaker-events.js';
import { BreakerFamily } from './breaker-family.js';
import { NOT_TIMED, type BreakerMachine } from './breaker-machine.js';
import { UNCOUNTED } from './breaker-calls.js';
import { BreakerHooks } from './breaker-hooks.js';
import type { BreakerOptions } from './breaker-options.js';
import type { BreakerSnapshot } from './breaker-snapshot.js';
import {
  CLOSED,
  DISABLED,
  HALF_OPEN,
  ISOLATED,
  OPEN,
  stateName,
  type BreakerState,
} from './breaker-state.js';
import type { CircuitOpenError } from './breaker.errors.js';
import { breakerMessages } from './breaker.messages.js';
import { configFor } from './config-cache.js';
import { reconfigured } from './reconfiguration.js';
import { baseOpenDuration } from './open-duration.js';
import { isCall, UncountedCall } from './uncounted-call.js';
import { FaultedAdmission } from './fault-injection.js';
import { FaultedCall } from './faulted-call.js';
import { isAbortSignal } from './abort-signal.js';
import {
  forcedSnapshot,
  forcingOf,
  type ForceableState,
  type ForceOptions,
} from './forced-state.js';
import {
  TrackedCall,
  type WithSignal,
  type CallPermit,
  type ProtectedCall,
} from './tracked-call.js';

export type { BreakerDeps } from './breaker-environment.js';

/** @publicApi */
export interface ExecuteOptions {
  /** The caller's signal: aborting it aborts the call, which is then `ignored`. */
  signal?: AbortSignal;
}

/**
 * A circuit breaker: closed, open, half-open (plus isolated and disabled by
 * hand), in front of one dependency and operation.
 *
 * Transitions are lazy: they are decided on the next call or read, never by a
 * timer, so a breaker costs nothing while idle and behaves deterministically
 * under an injected clock. Every call does O(1) work.
 *
 * @publicApi
 */
export class Breaker extends BreakerHooks {
  /** For a child of a per-key family: the family. */
  declare readonly parent: Breaker | undefined;
  /** @internal */
  declare protected readonly keyed: BreakerFamily<Breaker> | undefined;

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
    this.timed = this.needsTiming();
    // A child born (or born again after eviction) while its family lets every call through is forced alike.
    // Forced open needs nothing of the child: the family's gate rejects every key.
    const forced = lineage?.parent.evidence?.forced;
    if (forced !== undefined && forced.state !== 'open') this.hold(forced, this.monotonic());
    const faults = lineage?.parent.overload?.faults;
    if (faults !== undefined) this.holdFault(faults);
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

  /** The current state, after any transition that time alone has made due. */
  get state(): BreakerState {
    this.refresh(this.monotonic(), false);
    return stateName(this.current);
  }

  // ---------------------------------------------------------------------------
  // Running calls

  /**
   * Runs `fn` through the breaker. Rejects at once with `CircuitOpenError` when
   * the breaker does not admit the call; otherwise settles as `fn` does, or
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
    if (this.underFamilyGate()) {
      const call = this.familyCall<T>(signal);
      return isCall(call) ? call.run(fn, signal) : Promise.reject(call);
    }
    const token = this.admitOwn();
    if (typeof token !== 'number')
      return token instanceof FaultedAdmission
        ? this.faulted<T>(token).run(fn, signal)
        : Promise.reject(token);
    const startedAt = this.timed ? this.monotonic() : NOT_TIMED;
    // No deadline (timeoutMs: false), no caller signal: no call object, no promise of our own.
    if (token >= 0 && signal === undefined && this.config.timeoutMs === undefined)
      return this.runPlain(fn, token, startedAt);
    // Negative, so the plain path never needs to look for it.
    if (token === UNCOUNTED) return new UncountedCall<T>(signal).run(fn);
    return new TrackedCall<T>(this, token, startedAt).run(fn, signal);
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
    if (this.underFamilyGate()) {
      const call = this.familyCall<T>(undefined);
      return isCall(call)
        ? call.runMethod(withSignal, method, thisArg, args)
        : Promise.reject(call);
    }
    const token = this.admitOwn();
    if (typeof token !== 'number')
      return token instanceof FaultedAdmission
        ? this.faulted<T>(token).runMethod(withSignal, method, thisArg, args)
        : Promise.reject(token);
    const startedAt = this.timed ? this.monotonic() : NOT_TIMED;
    if (token >= 0 && this.config.timeoutMs === undefined)
      return this.runMethod(method, thisArg, args, token, startedAt);
    if (token === UNCOUNTED)
      return new UncountedCall<T>(undefined).runMethod(withSignal, method, thisArg, args);
    // The context, not its signal: reading the signal is what makes its AbortController.
    return new TrackedCall<T>(this, token, startedAt).runMethod(withSignal, method, thisArg, args);
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
    if (this.underFamilyGate()) {
      const call = this.familyCall<T>(undefined);
      if (!isCall(call)) throw call;
      return call;
    }
    const token = this.admitOwn();
    if (token instanceof FaultedAdmission) return this.faulted<T>(token);
    if (typeof token !== 'number') throw token;
    if (token === UNCOUNTED) return new UncountedCall<T>(undefined);
    return new TrackedCall<T>(this, token, this.timed ? this.monotonic() : NOT_TIMED);
  }

  /** Whether this is a child whose family is not closed: its calls pass the family's gate first. */
  private underFamilyGate(): boolean {
    const parent = this.parent;
    return parent !== undefined && parent.current !== CLOSED && parent.current !== DISABLED;
  }

  /**
   * A child's call while its family is not closed: the family rejects for every
   * key while open, and while half-open admits its probes through whichever key
   * is asked for. A family probe's call carries the family's permit with it
   * (settled alike); a child's own rejection returns that permit.
   */
  private familyCall<T>(
    signal: AbortSignal | undefined,
  ): TrackedCall<T> | UncountedCall<T> | CircuitOpenError {
    const parent = this.parent!;
    const gate = parent.admitAsFamily();
    if (typeof gate !== 'number') return gate;
    const admission = this.admitOwn();
    const token = admission instanceof FaultedAdmission ? admission.token : admission;
    // A family probe learns nothing from a call that is not recorded: its permit goes back too.
    if (typeof token !== 'number' || token === UNCOUNTED) {
      if (gate < 0) parent.settle(gate, 'ignored', undefined, NOT_TIMED, undefined);
      return typeof token !== 'number' ? token : new UncountedCall<T>(signal);
    }
    const startedAt = this.timed ? this.monotonic() : NOT_TIMED;
    const call =
      admission instanceof FaultedAdmission
        ? new FaultedCall<T>(this, token, startedAt, admission.plan)
        : new TrackedCall<T>(this, token, startedAt);
    if (gate !== 0) call.parentCall = new TrackedCall<T>(parent, gate, startedAt);
    return call;
  }

  /** A call admitted with an injected fault. */
  private faulted<T>(admission: FaultedAdmission): FaultedCall<T> {
    const startedAt = this.timed ? this.monotonic() : NOT_TIMED;
    return new FaultedCall<T>(this, admission.token, startedAt, admission.plan);
  }

  /** Counts a call that a fallback served; the decorator and the operator report theirs. */
  recordFallback(error: unknown, source: FallbackEvent['source']): void {
    this.counters.rare.fallbacks++;
    this.hub?.emit('fallback', { error, source });
  }

  // ---------------------------------------------------------------------------
  // Control

  /** Forces the breaker open (reason `isolated`) until `reset()`. */
  isolate(): void {
    this.setByHand(ISOLATED, 'isolate');
  }

  /** Lets every call through, still recording outcomes and events, never tripping, until `reset()`. */
  disable(): void {
    this.setByHand(DISABLED, 'disable');
  }

  /** Back to closed with an empty window, no backoff, no pause and no force (a family resets every child too). */
  reset(): void {
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.reset();
    this.resetToClosed();
  }

  /**
   * Holds the breaker in `state` whatever its calls do, until `release()` or
   * `untilMs`: `open` rejects every call, `closed` lets every call through and
   * records it without ever tripping, `disabled` lets every call through and
   * records nothing. The reason (and who set it) shows in snapshots, events,
   * logs and health details. A family forces every child it holds too.
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
    this.timed = this.needsTiming();
    if (this.keyed !== undefined)
      for (const child of this.keyed.all()) {
        child.applyConfig(current);
        child.timed = child.needsTiming();
      }
    const event: ReconfiguredEvent = { previous, current, reset };
    this.hub?.emit('reconfigured', event);
    return event;
  }

  /** Drops every listener. The breaker holds no timer or handle, so nothing else needs releasing. */
  dispose(): void {
    if (this.keyed !== undefined) for (const child of this.keyed.all()) child.dispose();
    this.hub?.clear();
    this.hub = undefined;
    this.timed = this.needsTiming();
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
      openRetryAfter: state === OPEN ? this.openRetryAfter(now) : 0,
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
