import {
  Inject,
  Injectable,
  Optional,
  type CanActivate,
  type ExecutionContext,
  type Type,
} from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { BreakerConfigError, CallRejectedError, type AdmissionPeek } from './core/index.js';
import { deferredRejection } from './core/calls/deferred-rejection.js';
import { REQUIRED_CIRCUITS_METADATA } from './circuit-breaker.constants.js';
import { CircuitBreakerExceptionFilter } from './circuit-breaker.exception-filter.js';
import { requireModule } from './circuit-breaker-module-missing.error.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
import { checkRequiredBreakers, type CircuitRequirement } from './circuit-requirement.js';
import { keyFor } from './circuit-key.js';
import { answererOf, refusalOf } from './http-refusal.js';
import type { CircuitBreakerRequirement } from './interfaces/circuit-breaker-admission-options.interface.js';

/** Where a class made by `requiring()` keeps its requirements: no public type names them. */
const REQUIRED = Symbol('nestjs-circuit-breaker.required-circuits');

/**
 * The guard of `@RequireCircuitBreaker()`: before pipes and the handler, asks each
 * required breaker whether it would admit a call now (`peek()`: no probe
 * permit, nothing counted) and rejects the request when any would not.
 *
 * Over HTTP the rejection is the filter's answer (503, `Retry-After`, the
 * `httpFilter` body) as an `HttpException` whose `cause` is the
 * `CallRejectedError`, so it needs no filter of its own; over other transports
 * the `CallRejectedError` itself, for the transport's filter. Either comes as
 * a rejected promise from `canActivate`, not a throw.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerGuard implements CanActivate {
  // Every parameter names its token: `requiring()` builds subclasses, which must inject alike.
  private readonly registry: CircuitBreakerRegistry;
  private readonly filter: CircuitBreakerExceptionFilter;

  constructor(
    @Optional() @Inject(CircuitBreakerRegistry) registry: CircuitBreakerRegistry | undefined,
    @Inject(Reflector) private readonly reflector: Reflector,
    @Optional() @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost | undefined,
    @Optional()
    @Inject(CircuitBreakerExceptionFilter)
    filter?: CircuitBreakerExceptionFilter,
  ) {
    // Nest builds the guard where it is used: without the module there, fail start-up saying so.
    this.registry = requireModule(
      registry,
      '@RequireCircuitBreaker() (CircuitBreakerGuard)',
      'CircuitBreakerGuard',
    );
    this.filter = answererOf(adapterHost, filter, 'CircuitBreakerGuard');
    // What requiring() names is on no route's metadata, so the start-up check of names does not see it: check it here.
    for (const { name, key, site } of this.always()) {
      const breaker = this.registry.orchestrator.use(name, site);
      if (key !== undefined && breaker.config.perKey === undefined)
        throw new BreakerConfigError(circuitBreakerMessages.keyMismatch(name, site, false), name);
    }
  }

  private always(): readonly CircuitRequirement[] {
    return (this.constructor as { [REQUIRED]?: readonly CircuitRequirement[] })[REQUIRED] ?? [];
  }

  /**
   * A guard class that requires `circuits` on every route it guards, for a
   * global guard (`{ provide: APP_GUARD, useClass: CircuitBreakerGuard.requiring('payments') }`)
   * or `@UseGuards()`.
   */
  static requiring(...circuits: CircuitBreakerRequirement[]): Type<CircuitBreakerGuard> {
    const required = checkRequiredBreakers('CircuitBreakerGuard.requiring()', circuits);
    @Injectable()
    class RequiringCircuitBreakerGuard extends CircuitBreakerGuard {
      static readonly [REQUIRED] = required;
    }
    return RequiringCircuitBreakerGuard;
  }

  // A refusal is a rejected promise, not a throw: measured under load on Fastify, Nest's path from a
  // guard that throws to the exceptions handler cost about 6 µs more per request than from one that rejects.
  canActivate(context: ExecutionContext): boolean | Promise<never> {
    const own = this.reflector.getAllAndMerge<CircuitRequirement[]>(REQUIRED_CIRCUITS_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]);
    // What `requiring()` gave the class, on every route it guards, beside what `@RequireCircuitBreaker()` names there.
    const always = this.always();
    const required = always.length === 0 ? own : [...always, ...own];
    for (const requirement of required) {
      const breaker = this.registry.get(requirement.name);
      // peekKey(), not forKey(): a check must not create a child (and evict another, maybe an open one).
      const answer =
        requirement.key === undefined
          ? breaker.peek()
          : breaker.peekKey(keyFor(breaker, requirement.site, requirement.key, context));
      if (!answer.permitted) return deferredRejection(this.refusal(context, answer));
    }
    return true;
  }

  private refusal(context: ExecutionContext, answer: AdmissionPeek & { permitted: false }): Error {
    const rejection = new CallRejectedError(
      answer.breakerName,
      answer.state,
      answer.reason,
      answer.retryAfterMs,
    );
    return refusalOf(context, rejection, this.adapterHost, this.filter);
  }
}
