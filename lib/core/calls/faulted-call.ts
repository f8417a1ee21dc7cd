import type { CallOutcome } from '../state/breaker-state.js';
import type { CallTimeoutError } from '../errors/breaker.errors.js';
import type { FaultPlan } from '../faults/fault-injection.js';
import type { TrackedCall, CallOwner, CallPermit, SettledHook } from './tracked-call.js';

type Method<A extends unknown[], T> = (...args: A) => T | PromiseLike<T>;

/**
 * An admitted call that got an injected fault: it holds the tracked call (its
 * deadline, its probe, its classification are the real ones) and the fault,
 * which stands in for the work. Callers that run the work themselves (the
 * RxJS operator, a decorated method's fallback path) hand it to `perform()`.
 *
 * @internal
 */
export class FaultedCall<T> implements CallPermit<T> {
  /** The call as the breaker counts it. */
  readonly tracked: TrackedCall<T>;

  constructor(
    private readonly owner: CallOwner,
    tracked: TrackedCall<T>,
    readonly plan: FaultPlan,
  ) {
    this.tracked = tracked;
  }

  get probe(): boolean {
    return this.tracked.probe;
  }
  get outcome(): CallOutcome | 'timeout' | undefined {
    return this.tracked.outcome;
  }
  get timeoutMs(): number | undefined {
    return this.tracked.timeoutMs;
  }
  get signal(): AbortSignal {
    return this.tracked.signal;
  }
  /** @internal Told once, when the call has settled and been counted: a bulkhead's slot is given back. */
  get onSettled(): SettledHook | undefined {
    return this.tracked.onSettled;
  }
  set onSettled(leave: SettledHook | undefined) {
    this.tracked.onSettled = leave;
  }
  /** @internal When the call is also a probe of its half-open family: the family's permit. */
  set parentCall(call: TrackedCall<T> | undefined) {
    this.tracked.parentCall = call;
  }

  run(
    fn: (context: { signal: AbortSignal }) => T | PromiseLike<T>,
    callerSignal: AbortSignal | undefined,
  ): Promise<T> {
    return this.tracked.run(
      (context) => this.perform(() => fn(context), context.signal),
      callerSignal,
    );
  }

  runMethod<A extends unknown[]>(
    withSignal: (
      context: { readonly signal: AbortSignal },
      method: Method<A, T>,
      thisArg: unknown,
      args: A,
    ) => T | PromiseLike<T>,
    method: Method<A, T>,
    thisArg: unknown,
    args: A,
  ): Promise<T> {
    return this.tracked.runMethod(
      (context, m, self, a) => this.perform(() => withSignal(context, m, self, a), context.signal),
      method,
      thisArg,
      args,
    );
  }

  succeed(value?: unknown): CallOutcome {
    return this.tracked.succeed(value);
  }
  fail(error: unknown, outcome?: 'failure' | 'overload'): CallOutcome {
    return this.tracked.fail(error, outcome);
  }
  timeOut(error: CallTimeoutError): void {
    this.tracked.timeOut(error);
  }
  release(reason?: unknown): void {
    this.tracked.release(reason);
  }
  track(result: T | PromiseLike<T>): Promise<T> {
    return this.tracked.track(result);
  }
  /** @internal Takes the admission back: this was not a call after all. */
  cancel(): void {
    this.tracked.cancel();
  }
  watchDeadline(onExpired: (error: CallTimeoutError) => void): void {
    this.tracked.watchDeadline(onExpired);
  }

  /**
   * `work` as the fault makes it: after the latency (which the call's signal,
   * aborted on its deadline, cuts short), the injected failure, or else `work`.
   */
  perform<R>(
    work: () => R | PromiseLike<R>,
    signal: AbortSignal = this.tracked.signal,
    synchronous = false,
  ): R | PromiseLike<R> {
    return this.plan.perform(signal, this.owner.deadlines, work, synchronous);
  }
}
