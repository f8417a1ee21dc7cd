import { NOT_TIMED } from './call-tokens.js';
import type { PlainRunner } from './plain-run.js';
import type { CallContext, ProtectedCall, SettledHook } from './tracked-call.js';

const NO_SIGNAL: CallContext = Object.freeze({ signal: undefined });

/**
 * A call on the plain path that holds a bulkhead slot: its token and the
 * hook that gives the slot back as it settles. No deadline, no signal, no
 * promise of its own: only what the slot needs. @internal
 */
export class HeldCall<T> {
  constructor(
    private readonly breaker: PlainRunner,
    private readonly token: number,
    /** Told once, as the call has settled and been counted: the slot is given back. */
    public onSettled: SettledHook | undefined,
  ) {}

  run(fn: ProtectedCall<T>, _callerSignal?: AbortSignal): Promise<T> {
    return this.work(() => fn(NO_SIGNAL));
  }

  runMethod(
    _withSignal: unknown,
    method: (...args: any[]) => T | PromiseLike<T>,
    thisArg: unknown,
    args: unknown[],
  ): Promise<T> {
    return this.work(() => method.apply(thisArg, args));
  }

  /** `runPlain()` that gives the slot back once the call is counted. */
  private async work(call: () => T | PromiseLike<T>): Promise<T> {
    const b = this.breaker;
    const startedAt = b.timed ? b.monotonic() : NOT_TIMED;
    const config = b.config;
    let value: T;
    try {
      value = await call();
    } catch (error) {
      const outcome = b.classifyError(error, config);
      b.settle(this.token, outcome, error, startedAt, undefined, config);
      this.onSettled?.(outcome, error);
      throw error;
    }
    const outcome = b.settleValue(this.token, value, startedAt, config);
    this.onSettled?.(outcome, value);
    return value;
  }

  /** Takes the admission back (its caller left while it waited): nothing is counted. */
  cancel(): void {
    this.breaker.withdrawAdmission(this.token);
    this.onSettled?.(undefined, undefined);
  }
}
