import { runMethodPlain, runPlain, type PlainRunner } from './plain-run.js';
import type { ProtectedCall } from './tracked-call.js';

/**
 * A call on the plain path that holds a bulkhead slot: its token and the
 * hook that gives the slot back as it settles. No deadline, no signal, no
 * promise of its own: only what the slot needs. @internal
 */
export class HeldCall<T> {
  constructor(
    private readonly breaker: PlainRunner,
    private readonly token: number,
    /** Told once, as the call settles (before it is counted): the slot is given back. */
    public onSettled: (() => void) | undefined,
  ) {}

  run(fn: ProtectedCall<T>, _callerSignal?: AbortSignal): Promise<T> {
    return runPlain(this.breaker, fn, this.token, this.onSettled);
  }

  runMethod(
    _withSignal: unknown,
    method: (...args: any[]) => T | PromiseLike<T>,
    thisArg: unknown,
    args: unknown[],
  ): Promise<T> {
    return runMethodPlain(this.breaker, method, thisArg, args, this.token, this.onSettled);
  }

  /** Takes the admission back (its caller left while it waited): nothing is counted. */
  cancel(): void {
    this.breaker.withdrawAdmission(this.token);
    this.onSettled?.();
  }
}
