import { UseGuards } from '@nestjs/common';
import { REQUIRED_CIRCUITS_METADATA } from '../circuit-breaker.constants.js';
import { CircuitBreakerGuard } from '../circuit-breaker.guard.js';
import { checkRequiredBreakers, type CircuitRequirement } from '../circuit-requirement.js';
import type { CircuitBreakerRequirement } from '../interfaces/circuit-breaker-admission-options.interface.js';
import { decorationSite } from './decoration-site.js';

/**
 * Rejects a request before pipes and the handler run when any of the named
 * breakers would reject a call now, and counts nothing as a call (no probe
 * permit is taken: see `Breaker.peek()`). For a fan-out endpoint that should
 * fail fast, before expensive work, when a dependency it needs is open.
 *
 * Over HTTP it answers as `CircuitBreakerExceptionFilter` does (503 with
 * `Retry-After`, the module's `httpFilter` bodies); over microservices,
 * WebSockets and GraphQL it throws the `CallRejectedError`, which the
 * transport's filter (`nestjs-circuit-breaker/microservices`, `/websockets`,
 * `/graphql`) turns into the transport's payload. On a method, a controller
 * (or gateway, resolver) class, or both (the names add up). For every route of
 * the application, use `CircuitBreakerGuard.requiring(...)` as a global guard.
 *
 * @publicApi
 */
export function RequireCircuitBreaker(
  ...circuits: CircuitBreakerRequirement[]
): ClassDecorator & MethodDecorator {
  return ((target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor) => {
    const site = decorationSite('@RequireCircuitBreaker()', target, propertyKey);
    const requirements = checkRequiredBreakers(site, circuits);
    const on = (descriptor === undefined ? target : descriptor.value) as object;
    // Given twice on one method or class, the names add up, and the guard is bound once.
    const earlier = Reflect.getOwnMetadata(REQUIRED_CIRCUITS_METADATA, on) as
      CircuitRequirement[] | undefined;
    Reflect.defineMetadata(
      REQUIRED_CIRCUITS_METADATA,
      earlier === undefined ? requirements : [...requirements, ...earlier],
      on,
    );
    if (earlier !== undefined) return descriptor;
    if (descriptor === undefined) {
      UseGuards(CircuitBreakerGuard)(target as never);
      return;
    }
    UseGuards(CircuitBreakerGuard)(target, propertyKey!, descriptor);
    return descriptor;
  }) as ClassDecorator & MethodDecorator;
}
