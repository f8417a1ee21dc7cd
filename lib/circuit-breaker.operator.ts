import { from, Observable, type ObservableInput, type OperatorFunction, type Subscription } from 'rxjs';
import { Breaker, CallTimeoutError, type CallPermit } from './core/index.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import { OptionChecker } from './core/option-checker.js';

/** @publicApi */
export interface CircuitBreakerOperatorOptions<R> {
  /**
   * What the subscriber gets instead when the call is rejected, fails or times
   * out, as in `catchError`. Errors the breaker classifies as success or
   * ignored (a 400) reach the subscriber unchanged.
   */
  fallback?: (error: unknown) => ObservableInput<R>;
  /** For a per-key breaker: the key of this subscription's target (host, endpoint, tenant). */
  key?: () => string;
}

/**
 * Runs every subscription to the source through `breaker`: each subscription is
 * one call.
 *
 * - The call's outcome is decided by the first of: the first value or
 *   completion (success, the value classified with `classifyResult`), an error
 *   (classified with `classify`), the deadline (`timeoutMs`: the source is
 *   unsubscribed and the subscriber gets `CallTimeoutError`), or unsubscribing
 *   (ignored; a probe's permit is returned). Later values and errors pass
 *   through untouched.
 * - A rejected call never subscribes to the source: the subscriber gets
 *   `CircuitOpenError` synchronously at subscribe time, or the fallback.
 *
 * Cold sources (`HttpService.get()`, `defer(() => fetch(...))`) make one
 * request per subscription, as intended. A hot source is not started by the
 * subscription, so the breaker only times how long the subscriber waited for
 * its first value: share the call, not the breaker.
 *
 * @publicApi
 */
export function circuitBreaker<T, R = never>(breaker: Breaker, options: CircuitBreakerOperatorOptions<R> = {}): OperatorFunction<T, T | R> {
  if (!(breaker instanceof Breaker)) throw new TypeError(circuitBreakerMessages.notABreaker('circuitBreaker()', breaker));
  // Read once and checked here, where the pipe is built, not at the first subscription.
  const check = new OptionChecker(`circuitBreaker() on circuit breaker "${breaker.name}"`);
  const given = check.record('', options, ['fallback', 'key'], '{ fallback?, key? }');
  const fallback = given.fallback === undefined ? undefined : check.func<(error: unknown) => ObservableInput<R>>('fallback', given.fallback, 'a function returning an ObservableInput');
  const key = given.key === undefined ? undefined : check.func<() => string>('key', given.key, 'a function returning a string');

  return (source) =>
    new Observable<T | R>((subscriber) => {
      const target = key === undefined ? breaker : breaker.forKey(key());
      let permit: CallPermit;
      try {
        permit = target.acquire();
      } catch (rejection) {
        if (fallback === undefined) {
          subscriber.error(rejection);
          return;
        }
        target.recordFallback(rejection, 'observable');
        return from(fallback(rejection)).subscribe(subscriber);
      }

      let decided = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let rescue: Subscription | undefined;
      const decide = (): void => {
        decided = true;
        if (timer !== undefined) clearTimeout(timer);
      };
      const failOver = (error: unknown): void => {
        if (fallback === undefined) {
          subscriber.error(error);
          return;
        }
        target.recordFallback(error, 'observable');
        let replacement: Observable<T | R>;
        try {
          replacement = from(fallback(error));
        } catch (fallbackError) {
          // Here we run inside the source's error handler, a timer or an abort listener, where a throw would
          // become an uncaught exception and leave the subscriber waiting forever; catchError does the same.
          subscriber.error(fallbackError);
          return;
        }
        rescue = replacement.subscribe(subscriber);
      };

      const inner = source.subscribe({
        next: (value) => {
          if (!decided) {
            decide();
            permit.succeed(value);
          }
          subscriber.next(value);
        },
        error: (error: unknown) => {
          if (decided) {
            subscriber.error(error);
            return;
          }
          decide();
          const outcome = permit.fail(error);
          if (outcome === 'failure' || outcome === 'overload') failOver(error);
          else subscriber.error(error);
        },
        complete: () => {
          if (!decided) {
            decide();
            permit.succeed(undefined);
          }
          subscriber.complete();
        },
      });

      if (!decided && permit.probe) {
        // A probe the breaker gives up on (halfOpen.maxWaitMs) is failed there; end it here too.
        permit.signal.addEventListener(
          'abort',
          () => {
            if (decided) return;
            decide();
            inner.unsubscribe();
            failOver(permit.signal.reason);
          },
          { once: true },
        );
      }
      if (!decided && permit.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          if (decided) return;
          decided = true;
          inner.unsubscribe();
          const error = new CallTimeoutError(target.name, permit.timeoutMs!);
          permit.timeOut(error);
          failOver(error);
        }, permit.timeoutMs);
        timer.unref?.();
      }

      return () => {
        if (!decided) {
          decide();
          permit.release();
        }
        inner.unsubscribe();
        rescue?.unsubscribe();
      };
    });
}
