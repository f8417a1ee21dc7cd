import { isObservable, of } from 'rxjs';
import type { Breaker } from '../core/index.js';
import type { BreakerRecovery } from '../circuit-breaker.operator.js';
import type { CircuitBreakerFallback } from '../interfaces/circuit-breaker-method-options.interface.js';
import { LastGood } from './last-good.js';

/** A fallback that had nothing to serve: a miss of `lastGood`. */
const NOTHING = Symbol('nothing to serve');

/**
 * The fallback of one decorated method: a method of its class, a function,
 * or the last good answer. Serves it for a call the breaker rejected or
 * counted as failed, counts what it serves (`recordFallback()`), and gives a
 * fallback that throws the call's error as `cause`.
 *
 * @internal
 */
export class FallbackRunner {
  private readonly lastGood: LastGood | undefined;

  constructor(
    private readonly fallback: CircuitBreakerFallback,
    /** `Class.method`, for messages. */
    qualifiedName: string,
  ) {
    this.lastGood =
      typeof fallback === 'object' ? new LastGood(fallback.lastGood, qualifiedName) : undefined;
  }

  /** Whether good answers are to be remembered (a `lastGood` fallback). */
  get remembers(): boolean {
    return this.lastGood !== undefined;
  }

  /** Remembers a good answer, for a `lastGood` fallback; nothing otherwise. */
  remember(scope: object, breaker: Breaker, args: unknown[], value: unknown): void {
    this.lastGood?.remember(scope, breaker, args, value);
  }

  /**
   * The fallback's answer for a call the breaker rejected or counted as failed
   * (`error` is then what the call produced: its error, or a resolved value such
   * as a 503 response); `otherwise()` when there is nothing to serve. For a
   * Promise method (`promise`), the answer and the fallback's error are a Promise.
   */
  recover(
    scope: object,
    breaker: Breaker,
    instance: unknown,
    error: unknown,
    args: unknown[],
    promise: boolean,
    otherwise: () => unknown,
  ): unknown {
    let served: unknown;
    try {
      served = this.serve(scope, breaker, instance, error, args);
    } catch (fallbackError) {
      return raise(fallbackError, promise);
    }
    if (served === NOTHING) return otherwise();
    if (promise)
      return Promise.resolve(served).catch((fallbackError: unknown) =>
        Promise.reject(withCause(fallbackError, error)),
      );
    return served;
  }

  /**
   * What the operator serves for an Observable method: `undefined` when there is
   * nothing to serve, so that the call's own error or value reaches the subscriber.
   */
  observableRecovery(scope: object, instance: unknown, args: unknown[]): BreakerRecovery<unknown> {
    return (error, breaker) => {
      const served = this.serve(scope, breaker, instance, error, args);
      if (served === NOTHING) return undefined;
      if (isObservable(served)) return served;
      if (isThenable(served))
        return Promise.resolve(served).catch((fallbackError: unknown) =>
          Promise.reject(withCause(fallbackError, error)),
        );
      return of(served);
    };
  }

  /**
   * Runs the fallback and counts it as served; `NOTHING` when there is no fresh
   * last good answer. A fallback that throws throws its own error, with the
   * call's as `cause`.
   */
  private serve(
    scope: object,
    breaker: Breaker,
    instance: unknown,
    error: unknown,
    args: unknown[],
  ): unknown {
    const fallback = this.fallback;
    if (this.lastGood !== undefined) {
      const hit = this.lastGood.lookup(scope, breaker, args);
      if (hit === undefined) return NOTHING;
      breaker.recordFallback(error, 'lastGood');
      return hit.value;
    }
    const fn = (
      typeof fallback === 'string' ? (instance as Record<string, unknown>)[fallback] : fallback
    ) as (...a: unknown[]) => unknown;
    breaker.recordFallback(error, typeof fallback === 'string' ? 'method' : 'function');
    try {
      return fn.call(instance, error, ...args);
    } catch (fallbackError) {
      throw withCause(fallbackError, error);
    }
  }
}

/** `error` thrown, or as a rejection for a Promise method. @internal */
export function raise(error: unknown, promise: boolean): unknown {
  if (promise) return Promise.reject(error);
  throw error;
}

/** @internal */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/** A fallback that throws surfaces its own error, with the call's error as `cause` where it can carry one. */
function withCause(error: unknown, cause: unknown): unknown {
  try {
    if (
      typeof error === 'object' &&
      error !== null &&
      (error as { cause?: unknown }).cause === undefined &&
      Object.isExtensible(error)
    ) {
      Object.defineProperty(error, 'cause', {
        value: cause,
        writable: true,
        configurable: true,
        enumerable: false,
      });
    }
  } catch {
    // A Proxy or a sealed error keeps what it has: the fallback's error still reaches the caller unchanged.
  }
  return error;
}
