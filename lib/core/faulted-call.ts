import type { FaultPlan } from './fault-injection.js';
import { TrackedCall, type CallOwner } from './tracked-call.js';

/**
 * An admitted call that got an injected fault: a tracked call (its deadline,
 * its probe, its classification are the real ones) whose work is the fault.
 * Callers that run the work themselves (the RxJS operator, a decorated
 * method's fallback path) hand it to `perform()`.
 *
 * @internal
 */
export class FaultedCall<T> extends TrackedCall<T> {
  constructor(
    private readonly owner: CallOwner,
    token: number,
    startedAt: number,
    readonly plan: FaultPlan,
  ) {
    super(owner, token, startedAt);
  }

  override run(
    fn: (context: { signal: AbortSignal }) => T | PromiseLike<T>,
    callerSignal: AbortSignal | undefined,
  ): Promise<T> {
    return super.run((context) => this.perform(() => fn(context), context.signal), callerSignal);
  }

  override runMethod<A extends unknown[]>(
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
    return super.runMethod(
      (context, m, self, a) => this.perform(() => withSignal(context, m, self, a), context.signal),
      method,
      thisArg,
      args,
    );
  }

  /**
   * `work` as the fault makes it: after the latency (which the call's signal,
   * aborted on its deadline, cuts short), the injected failure, or else `work`.
   */
  perform<R>(
    work: () => R | PromiseLike<R>,
    signal: AbortSignal = this.signal,
    synchronous = false,
  ): R | PromiseLike<R> {
    return this.plan.perform(signal, this.owner.deadlines, work, synchronous);
  }
}
