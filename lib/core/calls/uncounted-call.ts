import type { CallOutcome } from '../state/breaker-state.js';
import type { CallContext, CallPermit, SettledHook } from './tracked-call.js';

/**
 * A call that a breaker forced `disabled` lets through without recording it:
 * no window, no counter, no event, no deadline. It keeps the shape of a
 * tracked call, so every way in (execute, a decorated method, acquire and
 * the operator) runs it the same way; settling it counts nothing.
 *
 * @internal
 */
export class UncountedCall<T> implements CallPermit<T> {
  readonly probe = false;
  readonly timeoutMs = undefined;
  outcome: CallOutcome | 'timeout' | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  /** @internal Told once, when the call settles: a family counts the overflow child's calls by it. */
  onSettled: SettledHook | undefined = undefined;

  constructor(private readonly callerSignal: AbortSignal | undefined) {}

  /** The caller's signal when there is one: nothing of the breaker's own can abort this call. */
  get signal(): AbortSignal {
    return this.callerSignal ?? (this.controller ??= new AbortController()).signal;
  }

  run(fn: (context: CallContext) => T | PromiseLike<T>, _callerSignal?: AbortSignal): Promise<T> {
    let result: T | PromiseLike<T>;
    try {
      result = fn({ signal: this.callerSignal });
    } catch (error) {
      this.settle();
      return Promise.reject(error);
    }
    return this.settledWith(this.untilAborted(Promise.resolve(result)));
  }

  /** `result`, which settles the call as it settles (when someone listens for that). */
  private settledWith(result: Promise<T>): Promise<T> {
    if (this.onSettled === undefined) return result;
    const settle = () => this.settle();
    result.then(settle, settle);
    return result;
  }

  /** The caller's abort still ends the wait at once, as `execute()` promises, whether or not the work listens. */
  private untilAborted(result: Promise<T>): Promise<T> {
    const signal = this.callerSignal;
    if (signal === undefined) return result;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      result.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  runMethod<A extends unknown[]>(
    _withSignal: unknown,
    method: (...args: A) => T | PromiseLike<T>,
    thisArg: unknown,
    args: A,
  ): Promise<T> {
    try {
      return this.settledWith(Promise.resolve(method.apply(thisArg, args)));
    } catch (error) {
      this.settle();
      return Promise.reject(error);
    }
  }

  succeed(): CallOutcome {
    return this.settle();
  }

  fail(): CallOutcome {
    return this.settle();
  }

  timeOut(): void {
    this.settle();
  }

  release(): void {
    this.settle();
  }

  /** Nothing was admitted, so there is nothing to take back. */
  cancel(): void {
    this.settle();
  }

  /** A call let through uncounted has no deadline of the breaker's. */
  watchDeadline(): void {}

  perform<R>(work: () => R | PromiseLike<R>): R | PromiseLike<R> {
    return work();
  }

  track(result: T | PromiseLike<T>): Promise<T> {
    this.settle();
    try {
      return Promise.resolve(result);
    } catch (error) {
      // A thenable whose then() throws when read.
      return Promise.reject(error);
    }
  }

  private settle(): CallOutcome {
    if (this.outcome === undefined) {
      this.outcome = 'ignored';
      this.onSettled?.('ignored', undefined);
    }
    return 'ignored';
  }
}
