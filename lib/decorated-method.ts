import { Observable, tap } from 'rxjs';
import {
  isCallRejected,
  type Breaker,
  type BreakerOptions,
  type CallOutcome,
  type CallPermit,
} from './core/index.js';
import { retryCall } from './core/retry/retry.js';
import type { ResolvedRetryOptions } from './core/retry/retry-options.js';
import { callWithSignal, callWithSignalWhenAsked, readsCallSignal } from './call-signal.js';
import { REGISTRY_PROPERTY } from './circuit-breaker.constants.js';
import { CircuitBreakerModuleMissingError } from './circuit-breaker-module-missing.error.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import { breakerOperator } from './circuit-breaker.operator.js';
import { methodKeyFor } from './circuit-key.js';
import type { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
import { FaultedCall } from './core/calls/faulted-call.js';
import { observeMethod, observeWaitingPermit } from './core/calls/observed-call.js';
import type { WithSignal } from './core/calls/tracked-call.js';
import { FallbackRunner, raise } from './fallback/fallback-runner.js';
import { callUnder, countedAs, countsAsFailed, shapeOf } from './decorated-method-result.js';
import type { CircuitBreakerFallback } from './interfaces/circuit-breaker-method-options.interface.js';

/** What a method returns, learned from `design:returntype` or from its first result. */
type MethodKind = 'sync' | 'promise' | 'observable' | undefined;

/** What `@CircuitBreaker()` read on one method. @internal */
export interface DecoratedMethodOptions {
  /** The breaker's name. */
  readonly name: string;
  /** The breaker options the decorator gives (which define the breaker), if any. */
  readonly options: BreakerOptions | undefined;
  /** `Class.method`. */
  readonly qualifiedName: string;
  readonly fallback: CircuitBreakerFallback | undefined;
  readonly key: ((...args: any[]) => string | undefined) | undefined;
  /** The method's retry policy, checked. */
  readonly retry?: ResolvedRetryOptions | undefined;
  /** What `design:returntype` says the method returns. */
  readonly returnType: unknown;
  /** The method itself, undecorated. */
  readonly original: (...args: any[]) => unknown;
  /** Whether the decorator names the breaker (a reference to check), rather than taking `Class.method`. */
  readonly named: boolean;
}

/**
 * One method decorated with `@CircuitBreaker()`: its breaker's name and
 * options, where it is (for messages), and how each call is dispatched to the
 * breaker (its fallback is `FallbackRunner`'s).
 *
 * @internal
 */
export class DecoratedMethod {
  kind: MethodKind;
  readonly name: string;
  readonly options: BreakerOptions | undefined;
  /** `Class.method`. */
  readonly qualifiedName: string;
  /** Where the method names its breaker, as the orchestrator's messages name it: `@CircuitBreaker() on Class.method`. */
  readonly site: string;
  readonly fallback: CircuitBreakerFallback | undefined;
  readonly key: ((...args: any[]) => string | undefined) | undefined;
  readonly named: boolean;
  readonly retry: ResolvedRetryOptions | undefined;
  private readonly fallbacks: FallbackRunner | undefined;
  /** The breaker of each application, looked up once. */
  private readonly breakers = new WeakMap<CircuitBreakerRegistry, Breaker>();
  private lastRegistry: CircuitBreakerRegistry | undefined;
  private lastBreaker: Breaker | undefined;

  constructor({
    name,
    options,
    qualifiedName,
    fallback,
    key,
    retry,
    returnType,
    original,
    named,
  }: DecoratedMethodOptions) {
    this.retry = retry;
    this.name = name;
    this.options = options;
    this.qualifiedName = qualifiedName;
    this.site = circuitBreakerMessages.decoratorSite(qualifiedName);
    this.fallback = fallback;
    this.key = key;
    this.named = named;
    this.fallbacks =
      fallback === undefined ? undefined : new FallbackRunner(fallback, qualifiedName);
    // An async function returns a Promise whatever its annotation says; so does a method declared to.
    this.kind =
      returnType === Promise || original.constructor.name === 'AsyncFunction'
        ? 'promise'
        : returnType === Observable
          ? 'observable'
          : undefined;
    this.withSignal = readsCallSignal(original) ? callWithSignal : callWithSignalWhenAsked;
  }

  /** How the method is run with its call current: across its awaits when it reads getCallSignal() itself. */
  private readonly withSignal: typeof callWithSignal;

  /** Whether every call can go straight to the breaker: a Promise method without fallback or key. */
  get direct(): boolean {
    return (
      this.kind === 'promise' &&
      this.fallback === undefined &&
      this.key === undefined &&
      this.retry === undefined
    );
  }

  /** The breaker of the application that created `instance`. */
  breakerOf(instance: Record<symbol, unknown> | undefined): Breaker {
    const registry = instance?.[REGISTRY_PROPERTY] as CircuitBreakerRegistry | undefined;
    // Nearly always the same application as last time: one comparison instead of a lookup.
    if (registry === this.lastRegistry && registry !== undefined) return this.lastBreaker!;
    if (registry === undefined) throw this.missingRegistry();
    let breaker = this.breakers.get(registry);
    if (breaker === undefined) {
      breaker = registry.orchestrator.resolve(this.name, this.options, this.site);
      this.breakers.set(registry, breaker);
    }
    this.lastRegistry = registry;
    this.lastBreaker = breaker;
    return breaker;
  }

  private missingRegistry(): CircuitBreakerModuleMissingError {
    return new CircuitBreakerModuleMissingError(
      circuitBreakerMessages.noRegistry(this.name, this.qualifiedName),
      this.qualifiedName,
    );
  }

  /** A Promise method without fallback or key: nothing to do but run it through the breaker. */
  invokeDirect(
    instance: Record<symbol, unknown> | undefined,
    original: (...args: any[]) => unknown,
    args: any[],
  ): Promise<unknown> {
    // A Promise method reports a missing module as a rejection, like any other failure of the call.
    if (instance?.[REGISTRY_PROPERTY] === undefined) return Promise.reject(this.missingRegistry());
    return executeMethodOf(
      this.breakerOf(instance),
      original as (...a: unknown[]) => Promise<unknown>,
      instance,
      args,
      this.withSignal,
    );
  }

  invoke(
    instance: Record<symbol, unknown> | undefined,
    original: (...args: any[]) => unknown,
    args: any[],
  ): unknown {
    if (this.kind === 'promise' && instance?.[REGISTRY_PROPERTY] === undefined)
      return Promise.reject(this.missingRegistry());
    let breaker = this.breakerOf(instance);
    const registry = this.lastRegistry!;
    if (this.key !== undefined)
      breaker = breaker.forKey(methodKeyFor(breaker, this.site, this.key, instance, args));

    if (this.kind === 'observable') {
      let source = original.apply(instance, args) as Observable<unknown>;
      if (this.fallbacks?.remembers === true) {
        // The first value of a call the breaker counts a success is what a later failure may serve.
        const target = breaker;
        let first = true;
        source = source.pipe(
          tap((value) => {
            if (!first) return;
            first = false;
            if (target.classifyResult(value) === 'success')
              this.remember(registry, target, args, value);
          }),
        );
      }
      return source.pipe(
        breakerOperator<unknown, unknown>(
          breaker,
          undefined,
          this.fallbacks?.observableRecovery(registry, instance, args),
        ),
      );
    }

    if (this.retry !== undefined && this.kind === 'promise')
      return this.invokeRetried(registry, breaker, instance, original, args);

    // A Promise method without a fallback (but with a key) needs nothing the breaker's execute() does not do.
    if (this.kind === 'promise' && this.fallback === undefined) {
      return executeMethodOf(
        breaker,
        original as (...a: unknown[]) => Promise<unknown>,
        instance,
        args,
        this.withSignal,
      );
    }

    // Anything else (a fallback to decide on, a plain value, a return type not known yet): admit, call, then see
    // what came back; the permit says how the call was counted, so classifiers run once.
    let admitted: CallPermit | Promise<CallPermit>;
    try {
      // A Promise method waits for a bulkhead slot as it does without a fallback; others cannot wait.
      admitted = this.kind === 'promise' ? acquireWaitingOf(breaker) : breaker.acquire();
    } catch (rejection) {
      return this.refused(registry, breaker, instance, rejection, args);
    }
    if (!(admitted instanceof Promise))
      return this.run(registry, breaker, admitted, instance, original, args);
    return admitted.then(
      (permit) => this.run(registry, breaker, permit, instance, original, args),
      (rejection: unknown) => this.refused(registry, breaker, instance, rejection, args),
    );
  }

  /** A call the breaker did not admit: the fallback's, unless it is a misuse (a per-key breaker without a key). */
  private refused(
    registry: CircuitBreakerRegistry,
    breaker: Breaker,
    instance: unknown,
    rejection: unknown,
    args: any[],
  ): unknown {
    if (!isCallRejected(rejection)) throw rejection;
    return this.recover(registry, breaker, instance, rejection, args, this.kind);
  }

  /** Runs the method under `permit`, then sees what came back. */
  private run(
    registry: CircuitBreakerRegistry,
    breaker: Breaker,
    permit: CallPermit,
    instance: Record<symbol, unknown> | undefined,
    original: (...args: any[]) => unknown,
    args: any[],
  ): unknown {
    let result: unknown;
    const faulted = permit instanceof FaultedCall ? permit : undefined;
    try {
      // Only a call with a deadline has a signal worth passing on; only a Promise method can wait out a latency.
      const eager = this.withSignal === callWithSignal;
      result = callUnder(permit, original, instance, args, eager, this.kind === 'promise');
    } catch (error) {
      // An injected failure throws at once whatever the method returns: a Promise method still rejects.
      const kind = faulted === undefined ? (this.kind ??= 'sync') : (this.kind ?? 'sync');
      return this.onError(registry, breaker, permit.fail(error), instance, error, args, kind);
    }
    const shape = shapeOf(result);
    if (shape === 'observable') {
      // Its subscriptions are the calls, not this method call.
      (permit as CallPermit & { cancel(): void }).cancel();
      this.kind = 'observable';
      return this.invoke(instance, () => result, args);
    }
    if (shape === 'thenable') {
      // A latency makes a promise of any method: only the method's own answers say what it returns.
      if (faulted === undefined) this.kind = 'promise';
      return permit.track(result as PromiseLike<unknown>).then(
        (value) => {
          const outcome = permit.outcome;
          if (outcome === 'success') this.remember(registry, breaker, args, value);
          else if (countsAsFailed(outcome))
            return this.recover(registry, breaker, instance, value, args, 'promise', () => value);
          return value;
        },
        (error: unknown) =>
          this.onError(
            registry,
            breaker,
            countedAs(permit.outcome),
            instance,
            error,
            args,
            'promise',
          ),
      );
    }
    this.kind ??= 'sync';
    const outcome = permit.succeed(result);
    if (outcome === 'success') this.remember(registry, breaker, args, result);
    else if (countsAsFailed(outcome))
      return this.recover(registry, breaker, instance, result, args, 'sync', () => result);
    return result;
  }

  /**
   * A Promise method with a retry policy: each attempt is one call of the
   * breaker; the fallback answers the last as the breaker counted it (through
   * its permit), as without retry: a failure let through uncounted
   * (`force('disabled')`) gets none.
   */
  private invokeRetried(
    registry: CircuitBreakerRegistry,
    breaker: Breaker,
    instance: Record<symbol, unknown> | undefined,
    original: (...args: any[]) => unknown,
    args: any[],
  ): Promise<unknown> {
    if (this.fallbacks === undefined) {
      const attempt = () =>
        executeMethodOf(
          breaker.rejoined(),
          original as (...a: unknown[]) => Promise<unknown>,
          instance,
          args,
          this.withSignal,
        );
      return retryCall(breaker, attempt, this.retry!, undefined);
    }
    // How the breaker counted the last attempt; undefined while it was not admitted (refused).
    let counted: CallPermit['outcome'];
    const eager = this.withSignal === callWithSignal;
    const attempt = (): Promise<unknown> => {
      counted = undefined;
      const run = (permit: CallPermit): Promise<unknown> => {
        const settled = <T>(value: T): T => ((counted = permit.outcome), value);
        let result: unknown;
        try {
          result = callUnder(permit, original, instance, args, eager, true);
        } catch (error) {
          counted = permit.fail(error);
          return Promise.reject(error);
        }
        return permit.track(result).then(settled, (error: unknown) => {
          throw settled(error);
        });
      };
      let admitted: CallPermit | Promise<CallPermit>;
      try {
        // Each attempt on the key's child as it is then (see `withRetry()`).
        admitted = acquireWaitingOf(breaker.rejoined());
      } catch (rejection) {
        return Promise.reject(rejection);
      }
      return admitted instanceof Promise ? admitted.then(run) : run(admitted);
    };
    return retryCall(breaker, attempt, this.retry!, undefined).then(
      (value) => {
        if (counted === 'success') this.remember(registry, breaker, args, value);
        else if (countsAsFailed(counted))
          return this.recover(registry, breaker, instance, value, args, 'promise', () => value);
        return value;
      },
      (error: unknown) =>
        counted === undefined && isCallRejected(error)
          ? this.recover(registry, breaker, instance, error, args, 'promise')
          : this.onError(registry, breaker, countedAs(counted), instance, error, args, 'promise'),
    );
  }

  private onError(
    registry: CircuitBreakerRegistry,
    breaker: Breaker,
    outcome: CallOutcome,
    instance: unknown,
    error: unknown,
    args: any[],
    kind: MethodKind,
  ): unknown {
    // A 400 (success) or a caller's abort (ignored) is the caller's business, not a reason to fall back.
    if (outcome === 'success' || outcome === 'ignored') return raise(error, kind === 'promise');
    return this.recover(registry, breaker, instance, error, args, kind);
  }

  /**
   * The fallback's answer for a call the breaker rejected or counted as failed;
   * `otherwise()` when there is nothing to serve, which by default surfaces the error.
   */
  private recover(
    registry: CircuitBreakerRegistry,
    breaker: Breaker,
    instance: unknown,
    error: unknown,
    args: any[],
    kind: MethodKind,
    otherwise: () => unknown = () => raise(error, kind === 'promise'),
  ): unknown {
    if (this.fallbacks === undefined) return otherwise();
    return this.fallbacks.recover(
      registry,
      breaker,
      instance,
      error,
      args,
      kind === 'promise',
      otherwise,
    );
  }

  private remember(
    registry: CircuitBreakerRegistry,
    breaker: Breaker,
    args: any[],
    value: unknown,
  ): void {
    this.fallbacks?.remember(registry, breaker, args, value);
  }
}

/*
 * A decorated method's calls go on the call channels (`callStart`,
 * `callSettle`) as `execute()`'s and `acquire()`'s do. While nobody listens,
 * each call reads the channels' `hasSubscribers` once, and takes the path it
 * takes without channels.
 */

/** Whether someone listens on `breaker`'s call channels (a family: its own misuse error comes first). */
function observed(breaker: Breaker): boolean {
  const calls = breaker.env.calls;
  return (
    calls !== undefined &&
    (calls.start.hasSubscribers || calls.settle.hasSubscribers) &&
    breaker.keyed === undefined
  );
}

/** `breaker.executeMethod()`, published on the call channels while someone listens. */
function executeMethodOf(
  breaker: Breaker,
  method: (...args: unknown[]) => Promise<unknown>,
  thisArg: unknown,
  args: unknown[],
  withSignal: WithSignal<unknown>,
): Promise<unknown> {
  if (observed(breaker))
    return observeMethod(breaker, method, thisArg, args, withSignal, breaker.env.calls!);
  return breaker.executeMethod(method, thisArg, args, withSignal);
}

/** `breaker.acquireWaiting()`, published on the call channels while someone listens. */
function acquireWaitingOf(breaker: Breaker): CallPermit | Promise<CallPermit> {
  if (observed(breaker)) return observeWaitingPermit(breaker, breaker.env.calls!);
  return breaker.acquireWaiting();
}
