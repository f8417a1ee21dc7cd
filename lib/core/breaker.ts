import type { BreakerOptions } from './breaker-options.js';
import {
  BREAKER_EVENT_NAMES,
  BreakerEventHub,
  isBreakerEventName,
  type BreakerEventName,
  type FallbackEvent,
  type BreakerListener,
} from './breaker-events.js';
import { describeFailure, type BreakerSnapshot, type TransitionEvidence } from './breaker-snapshot.js';
import { BreakerCounters } from './breaker-counters.js';
import type { BreakerState, CallOutcome, FailureCategory, RejectionReason, TransitionReason } from './breaker-state.js';
import { BreakerHookError, CallTimeoutError, createRejection, type CircuitOpenError } from './breaker.errors.js';
import { breakerMessages } from './breaker.messages.js';
import { defaultClassifyError, defaultClassifyResult, failureCategoryOf, retryAfterOf } from './classify.js';
import type { Clock } from './clock.js';
import { environmentOf, type BreakerDeps, type BreakerEnvironment } from './breaker-environment.js';
import { BreakerEvidence, type LastChange } from './breaker-evidence.js';
import { configFor } from './config-cache.js';
import type { ResolvedBreakerOptions } from './resolve-options.js';
import { TrackedCall, type CallContext, type CallPermit, type ProtectedCall } from './tracked-call.js';
import { BreakerFamily } from './breaker-family.js';
import type { BreakerCoordination } from './breaker-coordinator.interface.js';
import { CountWindow } from './window/count-window.js';
import {
  SLOT_FAILURE,
  SLOT_OVERLOAD,
  SLOT_SLOW,
  SLOT_SUCCESS,
  type OutcomeWindow,
} from './window/outcome-window.interface.js';
import { TimeWindow } from './window/time-window.js';
import { OverloadThrottle } from './overload-throttle.js';

export type { BreakerDeps } from './breaker-environment.js';

/** @publicApi */
export interface ExecuteOptions {
  /** The caller's signal: aborting it aborts the call, which is then `ignored`. */
  signal?: AbortSignal;
}


const CLOSED = 0;
const OPEN = 1;
const HALF_OPEN = 2;
const ISOLATED = 3;
const DISABLED = 4;
const STATE_NAMES: readonly BreakerState[] = ['closed', 'open', 'half-open', 'isolated', 'disabled'];
// Shared by every call that has neither a caller signal nor a deadline.
const NO_SIGNAL: CallContext = Object.freeze({ signal: undefined });
// Probe ids only need to be unique within a breaker; one counter serves all.
let probeSeq = 0;
// A child's admission hands the half-open family's probe token to the call
// object it creates right after, synchronously: no field per breaker needed.
let pendingFamilyToken = 0;
// How long overload evidence counts with a count window; a time window uses its own duration. SRE's throttle looks at minutes.
const OVERLOAD_WINDOW_MS = 60_000;
// A throttled call may be admitted at any moment; this is a polite hint, not a schedule.
const THROTTLED_RETRY_AFTER_MS = 1_000;
// The start of a call admitted while nobody needed its duration.
const NOT_TIMED = Number.NaN;

/** The probe budget of one half-open period. */
interface HalfOpenRound {
  admitted: number;
  succeeded: number;
  failed: number;
  readonly probes: ProbeRecord[];
}

/** A half-open probe in flight; `call` is told when the breaker gives up on it. */
interface ProbeRecord {
  readonly id: number;
  readonly startedAt: number;
  call: { abandon(error: CallTimeoutError): void } | undefined;
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
export class Breaker {
  /** A child's name is derived from its family's and its key, when asked: one string less per target. */
  private readonly ownName: string | undefined;
  /** For a child of a per-key family: the family. */
  readonly parent: Breaker | undefined;
  /** For a child of a per-key family: its target's key. */
  readonly key: string | undefined;
  /** The options in force, after defaults and validation. */
  readonly config: ResolvedBreakerOptions;

  /** The clock, random source, coordinator and error reporter, shared with every breaker made from the same deps. */
  private readonly env: BreakerEnvironment;
  private readonly window: OutcomeWindow;
  private readonly counters = new BreakerCounters();
  private hub: BreakerEventHub | undefined;
  /** Whether calls must be timed: slow-call detection, a time window, or listeners that want durations. */
  private timed: boolean;

  private current = CLOSED;
  private sinceAt: number;
  /**
   * Wall time minus the monotonic reading, taken at the last transition: times
   * shown to people are the breaker's times plus this, so that a time that came
   * in as wall time (a shared open-until) goes out exactly as it came in.
   */
  private wallOffset: number;
  private generation = 0;
  private openUntilAt = 0;
  private pausedUntilAt = 0;
  private reopens = 0;
  private consecutiveFailures = 0;
  /** Only once something went wrong: the last failure and transition, and the hook faults reported. */
  private evidence: BreakerEvidence | undefined = undefined;
  /** Only while the dependency reports overload: the evidence client-side throttling sheds by. */
  private throttle: OverloadThrottle | undefined = undefined;

  /** Only while half-open: the probe budget in use. */
  private round: HalfOpenRound | undefined = undefined;

  private readonly family: BreakerFamily | undefined;
  /** @internal When the family last handed this child out. */
  lastUsedAt = 0;

  constructor(name: string, options?: BreakerOptions, deps?: BreakerDeps, lineage?: { parent: Breaker; key: string }) {
    if (typeof name !== 'string' || name === '') throw new TypeError(breakerMessages.badName(name));
    this.ownName = lineage === undefined ? name : undefined;
    this.parent = lineage?.parent;
    this.key = lineage?.key;
    // Children share their family's validated options: creating one is cheap.
    this.config = lineage === undefined ? configFor(name, options) : lineage.parent.config;
    this.env = lineage === undefined ? environmentOf(this.name, deps) : lineage.parent.env;
    const perKey = this.config.perKey;
    this.family =
      perKey === undefined || lineage !== undefined
        ? undefined
        : new BreakerFamily(this, perKey.maxKeys, perKey.idleMs, (key) => {
            const child = new Breaker(`${name}[${key}]`, undefined, deps, { parent: this, key });
            return child;
          });
    const w = this.config.window;
    this.window = w.type === 'count' ? new CountWindow(w.size) : new TimeWindow(w.durationMs, w.buckets);
    this.timed = this.needsTiming();
    this.sinceAt = this.env.monotonic();
    this.wallOffset = this.env.clock.now() - this.sinceAt;
  }

  /** The breaker's time source: wall time for timestamps, and the monotonic reading durations run on. */
  get clock(): Clock {
    return this.env.clock;
  }

  /** @internal The reading every duration runs on (see `Clock`): layers that age things with the breaker use it too. */
  monotonic(): number {
    return this.env.monotonic();
  }

  /** Names the breaker in errors, events, logs and metrics; a child of a family is `family[key]`. */
  get name(): string {
    return this.ownName ?? `${this.parent!.name}[${this.key}]`;
  }

  /** @internal The state as last decided, without the transitions time has made due. */
  get storedState(): BreakerState {
    return STATE_NAMES[this.current]!;
  }

  /**
   * The child breaker of one target (host, endpoint, tenant) of a per-key
   * family, created from the family's options on first use.
   */
  forKey(key: string): Breaker {
    if (this.family === undefined) {
      throw new TypeError(`Circuit breaker "${this.name}" is not per-key: configure perKey: { maxKeys } to use forKey().`);
    }
    return this.family.child(key);
  }

  /** The children a per-key family holds now (none for a plain breaker). */
  children(): IterableIterator<Breaker> {
    return this.family?.all() ?? [][Symbol.iterator]();
  }

  /** Calls `listener` with every child a per-key family creates from now on; returns the unsubscribe function. */
  onChild(listener: (child: Breaker) => void): () => void {
    if (this.family === undefined) return () => undefined;
    return this.family.onChild(listener);
  }

  /** Calls `listener` with every child a per-key family evicts from now on; returns the unsubscribe function. */
  onEvict(listener: (child: Breaker) => void): () => void {
    if (this.family === undefined) return () => undefined;
    return this.family.onEvict(listener);
  }

  /** The current state, after any transition that time alone has made due. */
  get state(): BreakerState {
    this.refresh(this.monotonic(), false);
    return STATE_NAMES[this.current]!;
  }

  /**
   * Runs `fn` through the breaker. Rejects at once with `CircuitOpenError` when
   * the breaker does not admit the call; otherwise settles as `fn` does, or
   * with `CallTimeoutError` after `timeoutMs`, or with the caller's abort reason.
   */
  execute<T>(fn: ProtectedCall<T>, options?: ExecuteOptions): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError(breakerMessages.notAFunction(this.name, fn));
    const signal = options?.signal;
    if (this.family !== undefined) throw new TypeError(familyMisuse(this.name, 'execute'));
    if (signal !== undefined) {
      // Checked before admission: a bad signal found later would leak the admission (a probe permit included).
      if (!isAbortSignal(signal)) throw new TypeError(breakerMessages.invalidSignal(this.name, signal));
      if (signal.aborted) return Promise.reject(signal.reason);
    }
    const token = this.admit();
    if (typeof token !== 'number') return Promise.reject(token);
    const startedAt = this.timed ? this.monotonic() : NOT_TIMED;
    // No deadline (timeoutMs: false), no caller signal, no family probe: no call object, no promise of our own.
    if (token >= 0 && signal === undefined && this.config.timeoutMs === undefined && pendingFamilyToken === 0) {
      return this.runPlain(fn, token, startedAt);
    }
    return this.trackedCall<T>(token, startedAt).run(fn, signal);
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
    withSignal: (call: CallContext & { readonly signal: AbortSignal }, method: (...args: any[]) => T | PromiseLike<T>, thisArg: unknown, args: unknown[]) => T | PromiseLike<T>,
  ): Promise<T> {
    if (this.family !== undefined) throw new TypeError(familyMisuse(this.name, 'execute'));
    const token = this.admit();
    if (typeof token !== 'number') return Promise.reject(token);
    const startedAt = this.timed ? this.monotonic() : NOT_TIMED;
    if (token >= 0 && this.config.timeoutMs === undefined && pendingFamilyToken === 0) return this.runMethod(method, thisArg, args, token, startedAt);
    // The context, not its signal: reading the signal is what makes its AbortController.
    return this.trackedCall<T>(token, startedAt).runMethod(withSignal, method, thisArg, args);
  }

  /**
   * Admits one call that the caller will run and settle itself, or throws
   * `CircuitOpenError`. Settle it with `succeed`/`fail`/`timeOut`/`release`, or
   * hand it the call's promise with `track()` to get the breaker's deadline and
   * classification. A probe that is never settled still expires after
   * `halfOpen.maxWaitMs`.
   */
  acquire<T = unknown>(): CallPermit<T> {
    if (this.family !== undefined) throw new TypeError(familyMisuse(this.name, 'acquire'));
    const token = this.admit();
    if (typeof token !== 'number') throw token;
    return this.trackedCall<T>(token, this.timed ? this.monotonic() : NOT_TIMED);
  }

  private trackedCall<T>(token: number, startedAt: number): TrackedCall<T> {
    const call = new TrackedCall<T>(this, token, startedAt);
    if (pendingFamilyToken !== 0) {
      // The family is half-open and this call is one of its probes: its outcome is the family's too.
      call.parentCall = new TrackedCall<T>(this.parent!, pendingFamilyToken, startedAt);
      pendingFamilyToken = 0;
    }
    return call;
  }

  /** Subscribes to an event; returns the function that unsubscribes. */
  on<E extends BreakerEventName>(event: E, listener: BreakerListener<E>): () => void {
    if (!isBreakerEventName(event)) throw new TypeError(breakerMessages.unknownEvent(this.name, event, BREAKER_EVENT_NAMES));
    if (typeof listener !== 'function') throw new TypeError(breakerMessages.notAListener(this.name, event, listener));
    const hub = (this.hub ??= new BreakerEventHub((name, fault) => this.onListenerFault(name, fault)));
    // Only events that carry a duration make calls read the clock.
    if (event === 'success' || event === 'failure' || event === 'ignored' || event === 'slowCall') this.timed = true;
    const off = hub.add(event, listener);
    return () => {
      off();
      // A listener that comes and goes must not slow the breaker for good.
      if (this.hub !== hub) return;
      if (hub.isEmpty()) this.hub = undefined;
      this.timed = this.needsTiming();
    };
  }

  /** Whether calls must be timed: slow-call detection, a time window, or listeners of durations. */
  private needsTiming(): boolean {
    const hub = this.hub;
    return (
      this.config.slowCallDurationMs !== undefined ||
      this.config.window.type === 'time' ||
      (hub !== undefined && (hub.has('success') || hub.has('failure') || hub.has('ignored') || hub.has('slowCall')))
    );
  }

  /** Forces the breaker open (reason `isolated`) until `reset()`. */
  isolate(): void {
    if (this.current !== ISOLATED) this.transition(ISOLATED, 'isolate', this.monotonic(), undefined);
  }

  /** Lets every call through, still recording outcomes and events, never tripping, until `reset()`. */
  disable(): void {
    if (this.current !== DISABLED) this.transition(DISABLED, 'disable', this.monotonic(), undefined);
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

  /** Closes an open or half-open breaker because the fleet's probe succeeded elsewhere (reason `shared-close`). */
  adoptClosed(): void {
    if (this.current !== OPEN && this.current !== HALF_OPEN) return;
    this.transition(CLOSED, 'shared-close', this.monotonic(), undefined);
  }

  /** Back to closed with an empty window, no backoff and no pause (a family resets every child too). */
  reset(): void {
    if (this.family !== undefined) for (const child of this.family.all()) child.reset();
    const now = this.monotonic();
    this.pausedUntilAt = 0;
    if (this.current !== CLOSED) {
      this.transition(CLOSED, 'reset', now, undefined);
    } else {
      this.generation++;
      this.window.reset();
      this.throttle = undefined;
      this.consecutiveFailures = 0;
      this.reopens = 0;
    }
  }

  /** Drops every listener. The breaker holds no timer or handle, so nothing else needs releasing. */
  dispose(): void {
    if (this.family !== undefined) for (const child of this.family.all()) child.dispose();
    this.hub?.clear();
    this.hub = undefined;
    this.timed = this.needsTiming();
  }

  snapshot(): BreakerSnapshot {
    const now = this.monotonic();
    this.refresh(now, false);
    const w = this.window;
    w.refresh(now);
    const c = this.config;
    const state = STATE_NAMES[this.current]!;
    const timeInStateMs = this.counters.timeInState(this.current, now - this.sinceAt);
    const toWall = this.wallOffset;
    return {
      name: this.name,
      ...(this.key === undefined ? {} : { key: this.key }),
      state,
      since: this.sinceAt + toWall,
      openUntil: this.current === OPEN ? this.openUntilAt + toWall : undefined,
      pausedUntil: this.pausedUntilAt > now ? this.pausedUntilAt + toWall : undefined,
      retryAfterMs: this.current === OPEN ? this.openRetryAfter(now) : this.pausedUntilAt > now ? this.pausedUntilAt - now : undefined,
      generation: this.generation,
      window: {
        ...(c.window.type === 'count' ? { type: 'count', size: c.window.size } : { type: 'time', durationMs: c.window.durationMs, buckets: c.window.buckets }),
        calls: w.calls,
        failures: w.failures,
        slowCalls: w.slowCalls,
        overloads: w.overloads,
        shed: this.throttle === undefined ? 0 : (this.throttle.refresh(now), this.throttle.shed),
        failureRate: w.calls === 0 ? 0 : w.failures / w.calls,
        slowCallRate: w.calls === 0 ? 0 : w.slowCalls / w.calls,
      },
      halfOpen:
        this.round === undefined
          ? undefined
          : {
              probesAdmitted: this.round.admitted,
              probesInFlight: this.round.probes.length,
              probesSucceeded: this.round.succeeded,
              probesFailed: this.round.failed,
            },
      totals: this.counters.totals(),
      timeInStateMs,
      ...(this.evidence?.lastChange === undefined ? {} : { lastTransition: evidenceOf(this.evidence.lastChange, toWall) }),
      ...(this.evidence?.lastFailure === undefined ? {} : { lastFailure: describeFailure(this.evidence.lastFailure, this.evidence.lastFailureCategory) }),
      ...(this.family === undefined ? {} : { family: this.family.snapshot() }),
      ...this.coordination(),
      thresholds: {
        failureRateThreshold: c.rateRule ? c.failureRateThreshold : undefined,
        minimumThroughput: c.minimumThroughput,
        consecutiveFailures: c.consecutiveFailures,
        slowCallDurationMs: c.slowCallDurationMs,
        slowCallRateThreshold: c.slowCallRateThreshold,
        timeoutMs: c.timeoutMs,
        openDurationMs: c.openDurationMs,
        nextOpenDurationMs: this.baseOpenDuration(this.current === HALF_OPEN || this.current === OPEN ? this.reopens + 1 : this.reopens),
        maxProbes: c.maxProbes,
        maxConcurrentProbes: c.maxConcurrentProbes,
        successesToClose: c.successesToClose,
      },
    };
  }

  private coordination(): { coordination?: BreakerCoordination } {
    const coordination = this.env.coordinator?.coordinationOf?.(this);
    return coordination === undefined ? {} : { coordination };
  }

  // ---------------------------------------------------------------------------
  // Admission

  /** A token (the generation; a negative probe id for probes) or the rejection. */
  private admit(): number | CircuitOpenError {
    const parent = this.parent;
    if (parent !== undefined && parent.current !== CLOSED && parent.current !== DISABLED) return this.admitUnderFamily(parent);
    return this.admitOwn();
  }

  /**
   * A child's call while its family is not closed: the family rejects for every
   * key while open, and while half-open admits its probes through whichever key
   * is asked for (a child's own rejection returns the family's probe permit).
   */
  private admitUnderFamily(parent: Breaker): number | CircuitOpenError {
    const gate = parent.admitAsFamily();
    if (typeof gate !== 'number') return gate;
    const token = this.admitOwn();
    if (typeof token !== 'number') {
      if (gate < 0) parent.settle(gate, 'ignored', undefined, NOT_TIMED, undefined);
      return token;
    }
    pendingFamilyToken = gate;
    return token;
  }

  /** @internal The family's own gate: 0 to pass, a probe token, or the rejection. */
  admitAsFamily(): number | CircuitOpenError {
    if (this.current === ISOLATED) return this.reject('isolated', undefined);
    const now = this.monotonic();
    this.refresh(now, true);
    if (this.current === OPEN) return this.reject('open', this.openRetryAfter(now));
    if (this.current === HALF_OPEN) return this.admitProbe(now);
    return 0;
  }

  /** @internal A child changed state: keep the family's count, and open the family when enough children are open. */
  onChildTransition(from: BreakerState, to: BreakerState, now: number): void {
    const family = this.family!;
    const grew = family.onChildTransition(from, to);
    const aggregate = this.config.aggregate;
    if (!grew || aggregate === undefined || this.current !== CLOSED) return;
    const known = family.size;
    if (known >= aggregate.minKeys && family.unhealthy / known >= aggregate.openWhenOpenRatio) this.transition(OPEN, 'open-ratio', now, undefined);
  }

  private admitOwn(): number | CircuitOpenError {
    const state = this.current;
    if (state === CLOSED) {
      if (this.pausedUntilAt !== 0 || this.throttle !== undefined) return this.admitUnderOverload();
      this.counters.admitted++;
      return this.generation;
    }
    if (state === DISABLED) {
      this.counters.admitted++;
      return this.generation;
    }
    if (state === ISOLATED) return this.reject('isolated', undefined);
    const now = this.monotonic();
    this.refresh(now, true);
    if (this.current === OPEN) return this.reject('open', this.openRetryAfter(now));
    return this.admitProbe(now);
  }

  /** Until the open duration ends; past it (the fleet's probe is someone else's), until that probe must be decided. */
  private openRetryAfter(now: number): number {
    return now < this.openUntilAt ? this.openUntilAt - now : this.config.probeMaxWaitMs;
  }

  /** The closed state while the dependency reports overload: honour its pause, then shed a share of calls. */
  private admitUnderOverload(): number | CircuitOpenError {
    const now = this.monotonic();
    if (this.pausedUntilAt !== 0) {
      if (now < this.pausedUntilAt) return this.reject('retry-after', this.pausedUntilAt - now);
      this.pausedUntilAt = 0;
    }
    const throttle = this.throttle;
    if (throttle !== undefined) {
      // Google SRE client-side throttling: shed in proportion to what the dependency refuses.
      const rejectProbability = throttle.rejectProbability(this.config.overloadK, this.config.minimumThroughput, now);
      if (rejectProbability > 0 && this.env.random() < rejectProbability) {
        throttle.countShed(now);
        return this.reject('throttled', THROTTLED_RETRY_AFTER_MS);
      }
      // The overloads have left its window: the dependency is healthy again, and calls take the plain path.
      if (throttle.overloads === 0) this.throttle = undefined;
    }
    this.counters.admitted++;
    return this.generation;
  }


  private admitProbe(now: number): number | CircuitOpenError {
    const c = this.config;
    const round = this.round!;
    if (round.admitted >= c.maxProbes || round.probes.length >= c.maxConcurrentProbes) {
      const oldest = round.probes[0];
      return this.reject('half-open-busy', oldest === undefined ? 0 : Math.max(0, oldest.startedAt + c.probeMaxWaitMs - now));
    }
    round.admitted++;
    const id = ++probeSeq;
    round.probes.push({ id, startedAt: now, call: undefined });
    this.counters.admitted++;
    this.counters.rare.probesAdmitted++;
    this.hub?.emit('probe', { result: 'admitted' });
    return -id;
  }

  private reject(reason: RejectionReason, retryAfterMs: number | undefined): CircuitOpenError {
    const error = createRejection(this.name, STATE_NAMES[this.current]!, reason, retryAfterMs, this.evidence?.lastFailure);
    this.counters.reject(reason);
    this.hub?.emit('rejected', { reason, error });
    return error;
  }

  // ---------------------------------------------------------------------------
  // Running a call

  private async runPlain<T>(fn: ProtectedCall<T>, token: number, startedAt: number): Promise<T> {
    let value: T;
    try {
      value = await fn(NO_SIGNAL);
    } catch (error) {
      this.settle(token, this.classifyError(error), error, startedAt, undefined);
      throw error;
    }
    this.settleValue(token, value, startedAt);
    return value;
  }

  private async runMethod<T>(method: (...args: any[]) => T | PromiseLike<T>, thisArg: unknown, args: unknown[], token: number, startedAt: number): Promise<T> {
    let value: T;
    try {
      value = await method.apply(thisArg, args);
    } catch (error) {
      this.settle(token, this.classifyError(error), error, startedAt, undefined);
      throw error;
    }
    this.settleValue(token, value, startedAt);
    return value;
  }

  /** @internal Counts a call that resolved with `value`; returns how it counted. */
  settleValue(token: number, value: unknown, startedAt: number): CallOutcome {
    // The common case in full, without the general bookkeeping: a success of the
    // current closed generation that nobody times (no duration listeners, no slow
    // calls, no time window) or classifies by hand.
    if (
      token === this.generation &&
      this.current === CLOSED &&
      !this.timed &&
      this.throttle === undefined &&
      this.config.classifyResult === undefined &&
      (typeof value !== 'object' || value === null || defaultClassifyResult(value, this.config.overloadK !== 0) === 'success')
    ) {
      this.counters.successes++;
      this.consecutiveFailures = 0;
      const w = this.window;
      w.record(SLOT_SUCCESS, 0);
      // A success can only trip a window that already holds failures (when it completes the minimum population).
      if (w.failures !== 0) this.evaluate(undefined);
      return 'success';
    }
    const outcome = this.classifyResult(value);
    this.settle(token, outcome, value, startedAt, undefined);
    return outcome;
  }

  // ---------------------------------------------------------------------------
  // Classification

  /** @internal */
  classifyError(error: unknown): CallOutcome {
    const c = this.config;
    if (c.classify !== undefined) {
      const outcome = this.callClassifier('classify', c.classify, error);
      if (outcome !== undefined) return outcome;
    }
    return defaultClassifyError(error, c.overloadK !== 0);
  }

  /** @internal */
  classifyResult(value: unknown): CallOutcome {
    const c = this.config;
    if (c.classifyResult !== undefined) {
      const outcome = this.callClassifier('classifyResult', c.classifyResult, value);
      if (outcome !== undefined) return outcome;
    }
    return defaultClassifyResult(value, c.overloadK !== 0);
  }

  /**
   * A classifier that throws or answers nonsense is a bug in the application: it
   * is reported (never to the caller, who gets its own outcome), and the call
   * counts as a failure so the breaker still protects and no permit is lost.
   */
  private callClassifier(option: string, classifier: (x: unknown) => CallOutcome | undefined, subject: unknown): CallOutcome | undefined {
    let outcome: unknown;
    try {
      outcome = classifier(subject);
    } catch (fault) {
      this.reportFault(option, new BreakerHookError(breakerMessages.classifierThrew(this.name, option, fault), fault));
      return 'failure';
    }
    if (outcome === undefined || outcome === 'success' || outcome === 'failure' || outcome === 'ignored' || outcome === 'overload') {
      return outcome;
    }
    this.reportFault(option, new BreakerHookError(breakerMessages.classifierAnswered(this.name, option, outcome), undefined));
    return 'failure';
  }

  private onListenerFault(event: BreakerEventName, fault: unknown): void {
    this.reportFault(`on('${event}')`, new BreakerHookError(breakerMessages.listenerThrew(this.name, event, fault), fault));
  }

  private noteFailure(failure: unknown, category: FailureCategory | 'overload'): void {
    const evidence = (this.evidence ??= new BreakerEvidence());
    evidence.lastFailure = failure;
    evidence.lastFailureCategory = category;
  }

  /** Reports the first fault of each source; the later ones would only repeat it. */
  private reportFault(source: string, error: Error): void {
    const reported = ((this.evidence ??= new BreakerEvidence()).reportedFaults ??= new Set());
    if (reported.has(source)) return;
    reported.add(source);
    try {
      this.env.reportError(error);
    } catch {
      // A reporter that throws has nowhere left to report to; the call must still settle.
    }
  }

  // ---------------------------------------------------------------------------
  // Settlement

  /** @internal Counts a timed-out call: a failure of category `timeout`. */
  settleTimeout(token: number, error: CallTimeoutError, startedAt: number): void {
    this.counters.rare.timeouts++;
    this.hub?.emit('timeout', { timeoutMs: error.timeoutMs, probe: token < 0 });
    this.settle(token, 'failure', error, startedAt, 'timeout');
  }

  /** @internal Counts one settled call; drops its effect on state when it belongs to an older generation. */
  settle(token: number, outcome: CallOutcome, subject: unknown, startedAt: number, category: FailureCategory | undefined): void {
    const now = this.timed ? this.monotonic() : 0;
    // A call admitted before anyone needed durations (a listener added since) reports 0.
    const durationMs = this.timed && startedAt === startedAt ? now - startedAt : 0;
    const probe = token < 0;
    const slowMs = this.config.slowCallDurationMs;
    const slow = slowMs !== undefined && durationMs >= slowMs && (outcome === 'success' || outcome === 'failure');
    const counters = this.counters;
    const hub = this.hub;

    let slot: number;
    if (outcome === 'success') {
      counters.successes++;
      slot = SLOT_SUCCESS;
      hub?.emit('success', { durationMs, probe });
    } else if (outcome === 'failure') {
      const cat = category ?? failureCategoryOf(subject);
      counters.fail(cat);
      this.noteFailure(subject, cat);
      slot = SLOT_FAILURE;
      hub?.emit('failure', { error: subject, category: cat, durationMs, probe });
    } else if (outcome === 'overload') {
      counters.rare.overloads++;
      this.noteFailure(subject, 'overload');
      slot = SLOT_OVERLOAD;
      hub?.emit('failure', { error: subject, category: 'overload', durationMs, probe });
    } else {
      counters.ignored++;
      hub?.emit('ignored', { error: subject, durationMs, probe });
      if (probe) this.releaseProbe(-token);
      return;
    }
    if (slow) {
      counters.rare.slowCalls++;
      slot |= SLOT_SLOW;
      hub?.emit('slowCall', { durationMs, thresholdMs: slowMs, outcome: outcome as 'success' | 'failure' });
    }

    if (probe) {
      this.settleProbe(-token, outcome === 'success' && !slow, subject);
      return;
    }
    if (token !== this.generation) return;
    const state = this.current;
    if (state !== CLOSED && state !== DISABLED) return;
    this.window.record(slot, now);
    if (outcome === 'failure') this.consecutiveFailures++;
    else if (outcome === 'success') this.consecutiveFailures = 0;
    if (state === CLOSED) {
      if (outcome === 'overload') this.onOverload(subject);
      else this.throttle?.record(false, this.monotonic());
      if (outcome !== 'overload') this.evaluate(outcome === 'failure' ? subject : undefined);
    }
  }

  /** Trips the breaker if the window or the failure streak says so. */
  /**
   * Trips the breaker if the failure streak, the failure rate or the slow-call
   * rate says so. `failure` is the failure just recorded, if the call was one:
   * only a failure's `Retry-After` may lengthen the open period.
   */
  private evaluate(failure: unknown): void {
    const c = this.config;
    const w = this.window;
    if (c.consecutiveFailures !== undefined && this.consecutiveFailures >= c.consecutiveFailures) {
      this.trip('consecutive-failures', failure);
      return;
    }
    // The slow-call rule stands on its own: configuring it is asking for it, whatever the failure rules.
    if (!c.rateRule && c.slowCallRateThreshold === undefined) return;
    if (c.window.type === 'time') w.refresh(this.monotonic());
    const calls = w.calls;
    if (calls < c.minimumThroughput) return;
    // Divide rather than multiply: 55 / 100 >= 0.55 holds, but 55 >= 0.55 * 100 (55.00000000000001) does not.
    if (c.rateRule && w.failures / calls >= c.failureRateThreshold) this.trip('failure-rate', failure);
    else if (c.slowCallRateThreshold !== undefined && w.slowCalls / calls >= c.slowCallRateThreshold) this.trip('slow-call-rate', failure);
  }

  private onOverload(subject: unknown): void {
    const now = this.monotonic();
    const hint = retryAfterOf(subject, this.env.clock.now());
    if (hint !== undefined && hint > 0) {
      const until = now + Math.min(hint, this.config.maxRetryAfterMs);
      if (until > this.pausedUntilAt) this.pausedUntilAt = until;
    }
    if (this.config.overloadK === 0) return;
    let throttle = this.throttle;
    if (throttle === undefined) {
      const w = this.config.window;
      // The accepted calls the window holds are the evidence that came before: the throttle starts with them.
      throttle = this.throttle = new OverloadThrottle(w.type === 'time' ? w.durationMs : OVERLOAD_WINDOW_MS, now, this.window.calls);
    }
    throttle.record(true, now);
  }


  private trip(reason: TransitionReason, subject: unknown): void {
    this.transition(OPEN, reason, this.monotonic(), retryAfterOf(subject, this.env.clock.now()));
  }

  private settleProbe(id: number, succeeded: boolean, subject: unknown): void {
    const index = this.indexOfProbe(id);
    // Expired, or admitted by a half-open period that has already ended.
    if (index === -1) return;
    const round = this.round!;
    round.probes.splice(index, 1);
    const c = this.config;
    if (succeeded) {
      round.succeeded++;
      this.counters.rare.probesSucceeded++;
      this.hub?.emit('probe', { result: 'succeeded' });
      if (round.succeeded >= c.successesToClose) this.transition(CLOSED, 'probes-succeeded', this.monotonic(), undefined);
      return;
    }
    round.failed++;
    this.counters.rare.probesFailed++;
    this.hub?.emit('probe', { result: 'failed' });
    // Reopen as soon as closing has become impossible.
    if (c.maxProbes - round.failed < c.successesToClose) {
      this.transition(OPEN, 'probe-failed', this.monotonic(), retryAfterOf(subject, this.env.clock.now()));
    }
  }

  private releaseProbe(id: number): void {
    const index = this.indexOfProbe(id);
    if (index === -1) return;
    this.round!.probes.splice(index, 1);
    this.round!.admitted--;
    this.counters.rare.probesReleased++;
    this.hub?.emit('probe', { result: 'released' });
  }

  /** @internal Lets a probe's call object be told when the probe expires. */
  attachProbe(id: number, call: { abandon(error: CallTimeoutError): void }): void {
    const index = this.indexOfProbe(id);
    if (index !== -1) this.round!.probes[index]!.call = call;
  }

  private indexOfProbe(id: number): number {
    const probes = this.round?.probes;
    if (probes === undefined) return -1;
    for (let i = 0; i < probes.length; i++) if (probes[i]!.id === id) return i;
    return -1;
  }

  // ---------------------------------------------------------------------------
  // Transitions

  /**
   * Makes the transitions that time alone has made due. Only an admission
   * (`admitting`) asks a coordinator for the fleet's probe permit: a health
   * check, a scrape or a snapshot must never take the fleet's probe.
   */
  private refresh(now: number, admitting: boolean): void {
    this.halfOpenIfDue(now, admitting);
    if (this.current !== HALF_OPEN) return;
    this.expireProbes(now);
    // A probe that expired long ago reopened the breaker long ago: that open period may be over too.
    this.halfOpenIfDue(now, admitting);
  }

  private halfOpenIfDue(now: number, admitting: boolean): void {
    if (this.current === OPEN && now >= this.openUntilAt && (this.env.coordinator === undefined || (admitting && this.env.coordinator.mayProbe(this)))) {
      // Dated when it was due, not when someone first looked: `since` and time in state stay true for an idle breaker.
      // With a coordinator it was due when the fleet's probe permit came, which is now.
      this.transition(HALF_OPEN, 'open-duration-elapsed', this.env.coordinator === undefined ? this.openUntilAt : now, undefined);
    }
  }

  /** A probe still unsettled after `halfOpen.maxWaitMs` counts as failed, so a hung probe cannot wedge the breaker. */
  private expireProbes(now: number): void {
    const maxWait = this.config.probeMaxWaitMs;
    let round: HalfOpenRound | undefined;
    while ((round = this.round) !== undefined && round.probes.length > 0 && now - round.probes[0]!.startedAt >= maxWait) {
      const record = round.probes[0]!;
      const error = new CallTimeoutError(this.name, maxWait, breakerMessages.probeExpired(this.name, maxWait));
      record.call?.abandon(error);
      this.counters.rare.timeouts++;
      this.counters.fail('timeout');
      this.noteFailure(error, 'timeout');
      this.hub?.emit('timeout', { timeoutMs: maxWait, probe: true });
      this.hub?.emit('failure', { error, category: 'timeout', durationMs: now - record.startedAt, probe: true });
      round.probes.shift();
      round.failed++;
      this.counters.rare.probesFailed++;
      this.hub?.emit('probe', { result: 'failed' });
      if (this.config.maxProbes - round.failed < this.config.successesToClose) {
        this.transition(OPEN, 'probe-expired', record.startedAt + maxWait, undefined);
      }
    }
  }

  private transition(to: number, reason: TransitionReason, now: number, retryAfterHint: number | undefined, adoptedOpenUntil?: number): void {
    const from = this.current;
    // The evidence that opened the breaker, for logs, events and snapshots: the window is emptied below.
    const evidence = to === OPEN && from === CLOSED ? { calls: this.window.calls, failures: this.window.failures, slowCalls: this.window.slowCalls } : undefined;
    (this.evidence ??= new BreakerEvidence()).lastChange = { from, to, reason, at: now, window: evidence };
    this.counters.spend(from, now - this.sinceAt);
    this.current = to;
    this.sinceAt = now;
    // From the current readings: `now` may be when the transition was due, earlier than this moment.
    const toWall = (this.wallOffset = this.env.clock.now() - this.monotonic());
    this.generation++;
    this.round = undefined;
    this.consecutiveFailures = 0;
    this.openUntilAt = 0;
    // Opening or closing starts the evidence afresh, as it starts the window afresh.
    this.throttle = undefined;
    if (to === OPEN) {
      if (from === HALF_OPEN) this.reopens++;
      this.openUntilAt = adoptedOpenUntil === undefined ? now + this.openDuration(retryAfterHint) : adoptedOpenUntil - toWall;
      this.window.reset();
    } else if (to === HALF_OPEN) {
      this.round = { admitted: 0, succeeded: 0, failed: 0, probes: [] };
    } else if (to === CLOSED) {
      this.reopens = 0;
      this.window.reset();
    }
    // An evicted child is no longer the family's: its transitions do not count.
    if (this.parent !== undefined && this.parent.family!.holds(this)) this.parent.onChildTransition(STATE_NAMES[from]!, STATE_NAMES[to]!, now);
    if (this.hub === undefined && this.env.coordinator === undefined) return;
    // Events carry wall times: people read them, and replicas share them.
    const change = {
      from: STATE_NAMES[from]!,
      to: STATE_NAMES[to]!,
      reason,
      at: now + toWall,
      ...(to === OPEN ? { openUntil: this.openUntilAt + toWall } : {}),
      ...(evidence === undefined ? {} : { window: evidence }),
    };
    this.hub?.emit('stateChange', change);
    this.env.coordinator?.transitioned(this, change);
  }

  private baseOpenDuration(reopens: number): number {
    const c = this.config;
    return Math.min(c.openDurationMs * c.backoffMultiplier ** reopens, c.backoffMaxMs);
  }

  /** Backoff, then jitter, then at least the dependency's `Retry-After` (capped). */
  private openDuration(retryAfterHint: number | undefined): number {
    const c = this.config;
    let duration = this.baseOpenDuration(this.reopens);
    // Whole milliseconds: open-until times and Retry-After estimates stay readable.
    if (c.jitter !== 0) duration = Math.round(duration * (1 - c.jitter + 2 * c.jitter * this.env.random()));
    if (retryAfterHint !== undefined) duration = Math.max(duration, Math.min(retryAfterHint, c.maxRetryAfterMs));
    return duration;
  }

  /** Counts a call that a fallback served; the decorator and the operator report theirs. */
  recordFallback(error: unknown, source: FallbackEvent['source']): void {
    this.counters.rare.fallbacks++;
    this.hub?.emit('fallback', { error, source });
  }

  /**
   * @internal Takes back an admission that turned out not to be a call (a
   * decorated method that returned an Observable: its subscriptions are the calls).
   */
  unadmit(token: number): void {
    this.counters.admitted--;
    if (token >= 0) return;
    const index = this.indexOfProbe(-token);
    if (index === -1) return;
    this.round!.probes.splice(index, 1);
    this.round!.admitted--;
    this.counters.rare.probesAdmitted--;
  }
}



function evidenceOf(change: LastChange, toWall: number): TransitionEvidence {
  const window = change.window;
  return {
    from: STATE_NAMES[change.from]!,
    to: STATE_NAMES[change.to]!,
    reason: change.reason,
    at: change.at + toWall,
    ...(window === undefined ? {} : { window: { ...window, failureRate: window.calls === 0 ? 0 : window.failures / window.calls } }),
  };
}

function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  // A signal from another realm or a polyfill: what the call uses of it is enough.
  const loose = value as Partial<AbortSignal> | null;
  try {
    return (
      typeof loose === 'object' &&
      loose !== null &&
      typeof loose.aborted === 'boolean' &&
      typeof loose.addEventListener === 'function' &&
      typeof loose.removeEventListener === 'function'
    );
  } catch {
    return false;
  }
}

function familyMisuse(name: string, method: string): string {
  return `Circuit breaker "${name}" is a per-key family: call forKey(key).${method}() so that each target has its own breaker.`;
}

