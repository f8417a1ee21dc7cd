import type { CallOutcome, FailureCategory } from '../state/breaker-state.js';
import { CallTimeoutError } from '../errors/breaker.errors.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import type { Deadline, DeadlineQueue, DeadlineScheduler } from './deadline-scheduler.js';

/** What the protected function receives. @publicApi */
export interface CallContext {
  /** Aborted when the call times out or the caller aborts; `undefined` when neither can happen. */
  readonly signal: AbortSignal | undefined;
}

/** @publicApi */
export type ProtectedCall<T> = (context: CallContext) => T | PromiseLike<T>;

/** @internal A decorated method's way of handing the call's signal to the method (the decorator: `getCallSignal()`). */
export type WithSignal<T> = (
  call: CallContext & { readonly signal: AbortSignal },
  method: (...args: any[]) => T | PromiseLike<T>,
  thisArg: unknown,
  args: unknown[],
) => T | PromiseLike<T>;

/**
 * An admission to call the dependency, for callers that run the call
 * themselves (an RxJS subscription, a decorated method). It settles its breaker
 * exactly once; later settlements are ignored.
 *
 * @publicApi
 */
export interface CallPermit<T = unknown> {
  /** True when this call is a half-open probe. */
  readonly probe: boolean;
  /** How the call was counted, once it was: `'timeout'` for a deadline the breaker enforced. */
  readonly outcome: CallOutcome | 'timeout' | undefined;
  /** The deadline that applies to this call: `timeoutMs`, or `halfOpen.probeTimeoutMs` for a probe. */
  readonly timeoutMs: number | undefined;
  /** The call's own signal, aborted on its deadline, when its probe expires, or by `release()` before it settled; hand it to the work you start. */
  readonly signal: AbortSignal;
  /** The call resolved with `value` (classified with `classifyResult`). */
  succeed(value?: unknown): CallOutcome;
  /**
   * The call failed with `error` (classified with `classify`). A caller that
   * has read the answer itself (a gRPC status, a response's pause hint) gives
   * `outcome`: it replaces the default classification (`classify`, when it
   * answers, still decides first). `'overload'` counts as overload, with the
   * pause `retryAfterOf(error)` reads (`error.retryAfterMs`, its headers), as
   * an HTTP 429 does; a failure when the breaker's `overload` is `false`.
   */
  fail(error: unknown, outcome?: 'failure' | 'overload'): CallOutcome;
  /** The call ran out of time: counted as a failure. */
  timeOut(error: CallTimeoutError): void;
  /**
   * The call's outcome is unknown or irrelevant (the caller went away): `ignored`, and its signal aborts (an
   * `AbortError`). `reason` (the caller's cancel, say) is what the `ignored` event and `call-settle` carry as the error.
   */
  release(reason?: unknown): void;
  /**
   * Settles the permit from the call's result: a value at once, a promise when it
   * settles or when the deadline passes (then with `CallTimeoutError`; the
   * underlying work cannot be aborted from here, pass a signal yourself).
   */
  track(result: T | PromiseLike<T>): Promise<T>;
  /**
   * Arms the breaker's deadline for a call you settle yourself, without a
   * promise (an HTTP client's callbacks, a stream): if `timeoutMs` passes
   * before you settle, the permit counts a timeout, its `signal` aborts and
   * `onExpired` hears the `CallTimeoutError`, so you can stop the work and
   * answer your caller. Nothing happens without a deadline, once settled, or
   * when `track()` armed it already. The deadline waits on the breaker's one
   * shared timer: no timer per call.
   */
  watchDeadline(onExpired: (error: CallTimeoutError) => void): void;
  /**
   * Starts `work`, the call itself, for a caller that runs it (an HTTP
   * client's dispatch, a stream): `work()`. On a breaker built with
   * `faultInjection`, an injected fault applies here: after its latency
   * (cut short by `signal`), its failure is thrown, or the promise rejects,
   * instead of starting `work`; settle the permit with `fail(error)` as for
   * any failure. `execute()` and `track()` callers need not call it.
   */
  perform<R>(work: () => R | PromiseLike<R>): R | PromiseLike<R>;
}

/**
 * Told once, when a call has settled and been counted: how it counted
 * (`'timeout'` for a deadline the breaker enforced; `undefined` when its
 * admission was withdrawn) and what it settled with (its value or error). A
 * bulkhead gives the call's slot back by it, and an adaptive one measures
 * the call. @internal
 */
export type SettledHook = (outcome: CallOutcome | 'timeout' | undefined, subject: unknown) => void;

/**
 * The breaker's side of a tracked call: how it counts what the call did. The
 * call knows its breaker only through this, so the engine's files do not
 * import each other in a circle.
 *
 * @internal
 */
export interface CallOwner {
  readonly name: string;
  /** Where the call's deadline waits: the process's timers, or the breaker's clock's own. */
  readonly deadlines: DeadlineScheduler;
  /** The options in force: a call keeps those it started under, and is judged by them. */
  readonly config: ResolvedBreakerOptions;
  attachProbe(id: number, call: { abandon(error: CallTimeoutError): void }): void;
  settleValue(
    token: number,
    value: unknown,
    startedAt: number,
    config: ResolvedBreakerOptions,
  ): CallOutcome;
  classifyError(
    error: unknown,
    config: ResolvedBreakerOptions,
    decided?: 'failure' | 'overload',
  ): CallOutcome;
  settle(
    token: number,
    outcome: CallOutcome,
    subject: unknown,
    startedAt: number,
    category: FailureCategory | undefined,
    config?: ResolvedBreakerOptions,
  ): void;
  settleTimeout(
    token: number,
    error: CallTimeoutError,
    startedAt: number,
    config: ResolvedBreakerOptions,
  ): void;
  withdrawAdmission(token: number): void;
}

/**
 * One admitted call that needs more than the plain path: a deadline, a caller
 * signal, a probe that may expire, or settlement by hand through `acquire()`.
 *
 * @internal
 */
export class TrackedCall<T> implements CallPermit<T>, Deadline {
  outcome: CallOutcome | 'timeout' | undefined = undefined;
  /** The breaker's deadline, or the call's own (`setDeadline()`). */
  timeoutMs: number | undefined;
  private settled = false;
  /** @internal While the deadline is pending: its place in the scheduler. */
  dueAt = 0;
  /** @internal */
  prev: Deadline | undefined = undefined;
  /** @internal */
  next: Deadline | undefined = undefined;
  /** @internal */
  queue: DeadlineQueue | undefined = undefined;
  // Created when someone reads the signal: an AbortController costs microseconds, and most calls never look.
  private controller: AbortController | undefined = undefined;
  private callerSignal: AbortSignal | undefined = undefined;
  // Made only for a call with a caller signal: most calls have none, and a closure per call is not free.
  private abortListener: (() => void) | undefined = undefined;
  private resolve: ((value: T) => void) | undefined = undefined;
  private reject: ((error: unknown) => void) | undefined = undefined;
  /** When the call is also a probe of its half-open family: the family's permit, settled alike. */
  parentCall: TrackedCall<T> | undefined = undefined;
  /** @internal Told once, when the call has settled by any path and been counted: a bulkhead's slot is given back. */
  onSettled: SettledHook | undefined = undefined;
  /** @internal Set by `acquire()` while someone listens on the call channels: told how the call settled. */
  observer: CallObserver | undefined = undefined;

  /** The options the call started under: what judges it, whatever `reconfigure()` puts in force meanwhile. */
  private readonly config: ResolvedBreakerOptions;

  constructor(
    private readonly breaker: CallOwner,
    private readonly token: number,
    private readonly startedAt: number,
  ) {
    const config = (this.config = breaker.config);
    this.timeoutMs = token < 0 ? config.probeTimeoutMs : config.timeoutMs;
    if (token < 0) breaker.attachProbe(-token, this);
  }

  get probe(): boolean {
    return this.token < 0;
  }

  /**
   * @internal The call's own deadline (`execute(fn, { timeoutMs })`), set
   * before it runs: it replaces the breaker's; a probe keeps the shorter of it
   * and its own, since its round gives up on it at its own anyway.
   */
  setDeadline(timeoutMs: number | undefined): void {
    const own = this.timeoutMs;
    if (this.token < 0 && own !== undefined && (timeoutMs === undefined || own < timeoutMs)) return;
    this.timeoutMs = timeoutMs;
  }

  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  /** Runs `fn` with a signal of its own, linked to the caller's. */
  run(
    fn: (context: { signal: AbortSignal }) => T | PromiseLike<T>,
    callerSignal: AbortSignal | undefined,
  ): Promise<T> {
    if (callerSignal !== undefined) {
      this.callerSignal = callerSignal;
      this.abortListener = () => this.onCallerAbort();
      callerSignal.addEventListener('abort', this.abortListener, { once: true });
    }
    let result: T | PromiseLike<T>;
    try {
      result = fn(new LazySignalContext(this));
    } catch (error) {
      this.fail(error);
      return Promise.reject(error);
    }
    return this.track(result);
  }

  /**
   * @internal `run()` for a method and its arguments, without a closure per
   * call: `withSignal` runs `method` the way its caller makes the call's signal
   * available (the decorator: getCallSignal()).
   */
  runMethod<A extends unknown[]>(
    withSignal: (
      context: { readonly signal: AbortSignal },
      method: (...args: A) => T | PromiseLike<T>,
      thisArg: unknown,
      args: A,
    ) => T | PromiseLike<T>,
    method: (...args: A) => T | PromiseLike<T>,
    thisArg: unknown,
    args: A,
  ): Promise<T> {
    let result: T | PromiseLike<T>;
    try {
      // Nothing can abort the signal of a call with no deadline, no probe and no family probe riding on it:
      // the method runs as it is, as on the plain path (a call in a bulkhead slot takes this one).
      result =
        this.token >= 0 && this.timeoutMs === undefined && this.parentCall === undefined
          ? method.apply(thisArg, args)
          : withSignal(new LazySignalContext(this), method, thisArg, args);
    } catch (error) {
      this.fail(error);
      return Promise.reject(error);
    }
    return this.track(result);
  }

  track(result: T | PromiseLike<T>): Promise<T> {
    if (this.settled) {
      // The caller aborted while the call was being started: its reason, not a complaint about the permit.
      if (this.outcome === 'ignored' && this.callerSignal?.aborted)
        return Promise.reject(this.callerSignal.reason);
      return Promise.reject(new TypeError(breakerMessages.permitSettled(this.breaker.name)));
    }
    let then: unknown;
    try {
      then = thenOf(result);
    } catch (error) {
      // A `then` that cannot even be read: the call failed, as `await` would say.
      this.fail(error);
      return Promise.reject(error);
    }
    if (typeof then !== 'function') {
      this.succeed(result);
      return Promise.resolve(result as T);
    }
    return new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      const timeoutMs = this.timeoutMs;
      if (timeoutMs !== undefined) this.breaker.deadlines.add(this, timeoutMs);
      const onError = (error: unknown): void => {
        if (!this.settled) this.fail(error);
      };
      try {
        (then as PromiseLike<T>['then']).call(
          result,
          (value) => {
            if (!this.settled) this.succeed(value);
          },
          onError,
        );
      } catch (error) {
        // A thenable whose then() throws has failed now; a later settlement of it is ignored, as promises do.
        onError(error);
      }
    });
  }

  succeed(value?: unknown): CallOutcome {
    if (this.settled) return this.countedAs();
    this.finish();
    // The breaker's own fast path for a plain success of a closed breaker.
    const outcome = (this.outcome = this.breaker.settleValue(
      this.token,
      value,
      this.startedAt,
      this.config,
    ));
    this.onSettled?.(outcome, value);
    this.parentCall?.succeed(value);
    this.observer?.settled(true, value);
    this.resolve?.(value as T);
    return outcome;
  }

  fail(error: unknown, decided?: 'failure' | 'overload'): CallOutcome {
    if (this.settled) return this.countedAs();
    if (decided !== undefined && decided !== 'failure' && decided !== 'overload')
      throw new TypeError(breakerMessages.invalidFailedOutcome(this.breaker.name, decided));
    this.finish();
    // The caller's own abort says nothing about the dependency.
    const config = this.config;
    const outcome = this.callerSignal?.aborted
      ? 'ignored'
      : this.breaker.classifyError(error, config, decided);
    this.outcome = outcome;
    this.breaker.settle(this.token, outcome, error, this.startedAt, undefined, config);
    this.onSettled?.(outcome, error);
    if (outcome === 'ignored') this.parentCall?.release();
    else this.parentCall?.fail(error, decided);
    this.observer?.settled(false, error);
    this.reject?.(error);
    return outcome;
  }

  timeOut(error: CallTimeoutError): void {
    if (this.settled) return;
    this.finish();
    this.outcome = 'timeout';
    this.controller?.abort(error);
    this.breaker.settleTimeout(this.token, error, this.startedAt, this.config);
    this.onSettled?.('timeout', error);
    this.parentCall?.timeOut(error);
    this.observer?.settled(false, error);
    this.reject?.(error);
  }

  release(reason?: unknown): void {
    if (this.settled) return;
    this.finish();
    this.outcome = 'ignored';
    // The caller went away (an unsubscribed Observable): what the call started with its signal is not wanted any more.
    this.controller?.abort();
    this.breaker.settle(this.token, 'ignored', reason, this.startedAt, undefined);
    this.onSettled?.('ignored', reason);
    this.parentCall?.release();
    this.observer?.settled(false, reason);
  }

  /** @internal Takes the admission back: this was not a call after all. */
  cancel(): void {
    if (this.settled) return;
    this.finish();
    this.outcome = 'ignored';
    this.breaker.withdrawAdmission(this.token);
    this.onSettled?.(undefined, undefined);
    this.parentCall?.cancel();
    this.observer?.settled(false, undefined);
  }

  /** The breaker gave up on this probe and has counted it as failed: settle the caller only. */
  abandon(error: CallTimeoutError): void {
    if (this.settled) return;
    this.finish();
    this.outcome = 'timeout';
    this.controller?.abort(error);
    this.onSettled?.('timeout', error);
    this.parentCall?.timeOut(error);
    this.observer?.settled(false, error);
    this.reject?.(error);
  }

  /** For a caller that settles the permit itself (`watchDeadline()`): told when the deadline passes. */
  private onExpired: ((error: CallTimeoutError) => void) | undefined = undefined;

  perform<R>(work: () => R | PromiseLike<R>): R | PromiseLike<R> {
    return work();
  }

  watchDeadline(onExpired: (error: CallTimeoutError) => void): void {
    if (this.settled || this.timeoutMs === undefined || this.queue !== undefined) return;
    this.onExpired = onExpired;
    this.breaker.deadlines.add(this, this.timeoutMs);
  }

  /** @internal The scheduler's call: the deadline passed first. */
  expire(): void {
    if (this.settled) return;
    const error = new CallTimeoutError(this.breaker.name, this.timeoutMs!);
    this.timeOut(error);
    this.onExpired?.(error);
  }

  private onCallerAbort(): void {
    if (this.settled) return;
    this.finish();
    this.outcome = 'ignored';
    const reason: unknown = this.callerSignal!.reason;
    this.controller?.abort(reason);
    this.breaker.settle(this.token, 'ignored', reason, this.startedAt, undefined);
    this.onSettled?.('ignored', reason);
    this.parentCall?.release();
    this.observer?.settled(false, reason);
    this.reject?.(reason);
  }

  private finish(): void {
    this.settled = true;
    if (this.queue !== undefined) this.breaker.deadlines.remove(this);
    if (this.abortListener !== undefined)
      this.callerSignal!.removeEventListener('abort', this.abortListener);
  }

  private countedAs(): CallOutcome {
    return this.outcome === 'timeout' ? 'failure' : (this.outcome ?? 'ignored');
  }
}

/** @internal What is told of a call settled by hand, for the call channels (`acquire()`). */
export interface CallObserver {
  /** `resolved`: `subject` is the value; otherwise the error, or `undefined` for a call released or withdrawn. */
  settled(resolved: boolean, subject: unknown): void;
}

/** What `fn` receives: the call's signal, made when first read. */
class LazySignalContext {
  constructor(private readonly call: { readonly signal: AbortSignal }) {}

  get signal(): AbortSignal {
    return this.call.signal;
  }
}

/** The `then` of a thenable (an object or a function with one, as the Promise spec reads it), or undefined. */
function thenOf(value: unknown): unknown {
  return (typeof value === 'object' && value !== null) || typeof value === 'function'
    ? (value as PromiseLike<unknown>).then
    : undefined;
}
