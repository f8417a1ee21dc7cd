import {
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, isObservable, of, type Observable } from 'rxjs';
import { CIRCUIT_INTERCEPTOR_METADATA } from './circuit-breaker.constants.js';
import { breakerOperator, type BreakerRecovery } from './circuit-breaker.operator.js';
import { requireModule } from './circuit-breaker-module-missing.error.js';
import { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
import type { CircuitInterception } from './circuit-interception.js';

/**
 * The interceptor of `@UseCircuitBreaker()`: each handling of a request is
 * one call of the breaker (through `circuitBreaker()`, so a rejected request
 * never reaches the handler). `@UseCircuitBreaker()` binds it; bound more
 * than once on a route (on the class and on the method, or globally as
 * well), only the outermost binding makes the call, so a handling still
 * counts once and takes one probe permit.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerInterceptor implements NestInterceptor {
  private readonly registry: CircuitBreakerRegistry;

  constructor(
    @Optional() @Inject(CircuitBreakerRegistry) registry: CircuitBreakerRegistry | undefined,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {
    // Nest builds the interceptor where it is used: without the module there, fail start-up saying so.
    this.registry = requireModule(
      registry,
      '@UseCircuitBreaker() (CircuitBreakerInterceptor)',
      'CircuitBreakerInterceptor',
    );
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const use = this.reflector.getAllAndOverride<CircuitInterception | undefined>(
      CIRCUIT_INTERCEPTOR_METADATA,
      [context.getHandler(), context.getClass()],
    );
    if (use === undefined || intercepted.has(context)) return next.handle();
    // Nest hands every interceptor of a route the same context: the bindings after this one see it taken.
    intercepted.add(context);
    const breaker = this.registry.get(use.name);
    const keyOf = use.key;
    const fallback = use.fallback;
    const recover: BreakerRecovery<unknown> | undefined =
      fallback === undefined
        ? undefined
        : (error, target) => {
            target.recordFallback(error, 'interceptor');
            const answer = fallback(error, context);
            return isObservable(answer) || isThenable(answer) ? from(answer) : of(answer);
          };
    return next
      .handle()
      .pipe(
        breakerOperator(
          breaker,
          keyOf === undefined ? undefined : () => keyOf(context),
          recover,
          use.site,
        ),
      );
  }
}

/** The contexts a binding of this interceptor already runs through its breaker. */
const intercepted = new WeakSet<ExecutionContext>();

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
