import {
  from,
  Observable,
  throwError,
  type ObservableInput,
  type Observer,
  type OperatorFunction,
  type Subscriber,
  type Subscription,
  type TeardownLogic,
} from 'rxjs';
import { Breaker, type CallPermit } from './core/index.js';
import { subscribeWithCallSignal } from './call-signal.js';
import { FaultedCall } from './core/calls/faulted-call.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import { keyFor } from './circuit-key.js';
import { OptionChecker } from './core/options/option-checker.js';

/** @publicApi */
export interface CircuitBreakerOperatorOptions<R> {
  /**
   * What the subscriber gets instead, as in `catchError`, whenever the breaker
   * counts the call as rejected, failed, timed out or overloaded: an error, or a
   * first value it classifies as a failure or an overload (a 503 response),
   * which the fallback then replaces and receives as its argument. Errors and
   * values the breaker classifies as success or ignored (a 400) reach the
   * subscriber unchanged.
   */
  fallback?: (error: unknown) => ObservableInput<R>;
  /**
   * For a per-key breaker: the key of this subscription's target (host,
   * endpoint, tenant). `undefined`, `null` or `''` is `FAMILY_DEFAULT_KEY`.
   */
  key?: () => string | undefined;
}

/**
 * What replaces a call the breaker rejected or counted as failed, given what
 * the call produced (its error, or its first value) and the breaker that
 * counted it; `undefined` when there is nothing to serve. It counts what it
 * serves with `recordFallback()`.
 *
 * @internal
 */
export type BreakerRecovery<R> = (
  error: unknown,
  breaker: Breaker,
) => ObservableInput<R> | undefined;

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
 *   `CallRejectedError` synchronously at subscribe time, or the fallback.
 * - With a fallback, a first value classified as a failure or an overload is
 *   replaced: the source is unsubscribed and the subscriber gets the fallback.
 *
 * Cold sources (`HttpService.get()`, `fromFetch(url)`, `defer(() =>
 * fetch(url, { signal: getCallSignal() }))`) make one request per
 * subscription, as intended; while the source is subscribed,
 * `getCallSignal()` is the call's signal, which the deadline and
 * unsubscribing (`switchMap`, `takeUntil`) abort; `undefined` when the call
 * has no deadline, as in a decorated method. Never
 * `from(fetch(url))`: that request is sent before the breaker decides. A hot source is not started by the
 * subscription, so the breaker only times how long the subscriber waited for
 * its first value: share the call, not the breaker.
 *
 * @publicApi
 */
export function circuitBreaker<T, R = never>(
  breaker: Breaker,
  options: CircuitBreakerOperatorOptions<R> = {},
): OperatorFunction<T, T | R> {
  if (!(breaker instanceof Breaker))
    throw new TypeError(circuitBreakerMessages.notABreaker('circuitBreaker()', breaker));
  // Read once and checked here, where the pipe is built, not at the first subscription.
  const check = new OptionChecker(circuitBreakerMessages.operatorSubject(breaker.name));
  const given = check.record('', options, ['fallback', 'key'], '{ fallback?, key? }');
  const fallback =
    given.fallback === undefined
      ? undefined
      : check.func<(error: unknown) => ObservableInput<R>>(
          'fallback',
          given.fallback,
          'a function returning an ObservableInput',
        );
  const key =
    given.key === undefined
      ? undefined
      : check.func<() => string | undefined>('key', given.key, 'a function returning a string');
  const recover: BreakerRecovery<R> | undefined =
    fallback === undefined
      ? undefined
      : (error, target) => {
          target.recordFallback(error, 'observable');
          // from() here, so that a fallback returning undefined is the TypeError it is, not "nothing to serve".
          return from(fallback(error));
        };
  return breakerOperator(breaker, key, recover, OPERATOR_SITE);
}

/** Where the operator's `key` option is given, for its errors' messages. */
const OPERATOR_SITE = 'circuitBreaker()';

/**
 * The operator itself, for `circuitBreaker()` and for decorated Observable
 * methods, whose fallbacks may have nothing to serve (a `lastGood` miss) and
 * count themselves under their own source. `keySite` names where `key` was
 * given, in the messages of its errors.
 *
 * @internal
 */
export function breakerOperator<T, R>(
  breaker: Breaker,
  key: (() => string | undefined) | undefined,
  recover: BreakerRecovery<R> | undefined,
  keySite = '',
): OperatorFunction<T, T | R> {
  return (source) =>
    new Observable<T | R>((subscriber) => {
      const target =
        key === undefined ? breaker : breaker.forKey(keyFor(breaker, keySite, key, undefined));
      let permit: CallPermit;
      try {
        permit = target.acquire();
      } catch (rejection) {
        return serveRejection(rejection, target, recover, subscriber);
      }
      return new OperatorCall(permit, target, recover, subscriber).start(source);
    });
}

/** A call the breaker rejected: the fallback's answer, or the rejection. */
function serveRejection<R>(
  rejection: unknown,
  target: Breaker,
  recover: BreakerRecovery<R> | undefined,
  subscriber: Subscriber<unknown>,
): TeardownLogic {
  let replacement: ObservableInput<R> | undefined;
  try {
    replacement = recover?.(rejection, target);
  } catch (fallbackError) {
    subscriber.error(fallbackError);
    return;
  }
  if (replacement === undefined) {
    subscriber.error(rejection);
    return;
  }
  return from(replacement).subscribe(subscriber);
}

/**
 * One subscription the breaker admitted: the first of its first value,
 * completion, error, deadline, abandoned probe or unsubscribing decides the
 * call; a failure the fallback can serve hands the subscriber over to it.
 */
class OperatorCall<T, R> {
  private decided = false;
  /** Set once a fallback has taken over: whatever the source still emits (synchronously, before it could be unsubscribed) is not the subscriber's. */
  private replaced = false;
  private inner: Subscription | undefined;
  private rescue: Subscription | undefined;

  constructor(
    private readonly permit: CallPermit,
    private readonly target: Breaker,
    private readonly recover: BreakerRecovery<R> | undefined,
    private readonly subscriber: Subscriber<T | R>,
  ) {}

  start(source: Observable<T>): TeardownLogic {
    const permit = this.permit;
    // An injected fault stands in for the source: nothing reaches the dependency but what the fault lets through.
    const upstream = permit instanceof FaultedCall ? faultedSource(permit, source) : source;
    const observer: Partial<Observer<T>> = {
      next: (value) => this.next(value),
      error: (error: unknown) => this.error(error),
      complete: () => this.complete(),
    };
    // The call's signal for what the source starts as it is subscribed, e.g.
    // `defer(() => fetch(url, { signal: getCallSignal() }))`: the deadline, or unsubscribing, aborts that request.
    // Only a call with a deadline has one, as for a decorated method: the plain path stays cheap.
    this.inner =
      permit.timeoutMs === undefined
        ? upstream.subscribe(observer)
        : subscribeWithCallSignal(permit, upstream, observer);
    // The fallback took over while the source was still emitting synchronously, before `inner` existed.
    if (this.replaced) this.inner.unsubscribe();
    if (!this.decided && permit.probe) this.endWhenProbeAbandoned();
    if (!this.decided && permit.timeoutMs !== undefined) this.endAtDeadline();
    return () => this.teardown();
  }

  private next(value: T): void {
    if (this.replaced) return;
    if (!this.decided) {
      this.decided = true;
      const outcome = this.permit.succeed(value);
      // A resolved answer the breaker counts as failed (a 503 response) is what a fallback is for, as a rejection is.
      if (outcome === 'failure' || outcome === 'overload') {
        this.failOver(value, () => this.subscriber.next(value));
        return;
      }
    }
    this.subscriber.next(value);
  }

  private error(error: unknown): void {
    if (this.replaced) return;
    if (this.decided) {
      this.subscriber.error(error);
      return;
    }
    this.decided = true;
    const outcome = this.permit.fail(error);
    if (outcome === 'failure' || outcome === 'overload')
      this.failOver(error, () => this.subscriber.error(error));
    else this.subscriber.error(error);
  }

  private complete(): void {
    if (this.replaced) return;
    if (!this.decided) {
      this.decided = true;
      this.permit.succeed(undefined);
    }
    this.subscriber.complete();
  }

  /** A probe the breaker gives up on (halfOpen.maxWaitMs) is failed there; end it here too. */
  private endWhenProbeAbandoned(): void {
    const signal = this.permit.signal;
    signal.addEventListener('abort', () => this.endWith(signal.reason as unknown), { once: true });
  }

  /** The breaker's own deadline (one timer for the process): it counts the timeout, we end the subscription. */
  private endAtDeadline(): void {
    this.permit.watchDeadline((error) => this.endWith(error));
  }

  /** The breaker decided the call (a deadline, an abandoned probe): the source is no longer wanted. */
  private endWith(reason: unknown): void {
    if (this.decided) return;
    this.decided = true;
    this.inner?.unsubscribe();
    this.failOver(reason, () => this.subscriber.error(reason));
  }

  /** Hands the subscriber to the fallback for what the call produced; `otherwise` when it has nothing to serve. */
  private failOver(produced: unknown, otherwise: () => void): void {
    if (this.recover === undefined) {
      otherwise();
      return;
    }
    let replacement: Observable<T | R>;
    try {
      const input = this.recover(produced, this.target);
      if (input === undefined) {
        otherwise();
        return;
      }
      replacement = from(input);
    } catch (fallbackError) {
      // Here we run inside the source's handlers, a timer or an abort listener, where a throw would
      // become an uncaught exception and leave the subscriber waiting forever; catchError does the same.
      replacement = throwError(() => fallbackError);
    }
    this.replaced = true;
    this.inner?.unsubscribe();
    this.rescue = replacement.subscribe(this.subscriber);
  }

  private teardown(): void {
    if (!this.decided) {
      this.decided = true;
      // Aborts the call's signal too (when one was made): the request the source started is not wanted.
      this.permit.release();
    }
    this.inner?.unsubscribe();
    this.rescue?.unsubscribe();
  }
}

/**
 * The source as an injected fault makes it: subscribed after the fault's
 * latency (which the call's deadline cuts short), or never, when the fault
 * fails the call; unsubscribing ends the latency too.
 */
function faultedSource<T>(permit: FaultedCall<unknown>, source: Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const gone = new AbortController();
    let inner: Subscription | undefined;
    let started: unknown;
    try {
      started = permit.perform(
        () => {
          if (gone.signal.aborted) return;
          inner =
            permit.timeoutMs === undefined
              ? source.subscribe(subscriber)
              : subscribeWithCallSignal(permit, source, subscriber);
        },
        AbortSignal.any([permit.signal, gone.signal]),
      );
    } catch (error) {
      subscriber.error(error);
      return;
    }
    if (started instanceof Promise)
      started.then(undefined, (error: unknown) => {
        if (!gone.signal.aborted) subscriber.error(error);
      });
    return () => {
      gone.abort();
      inner?.unsubscribe();
    };
  });
}
