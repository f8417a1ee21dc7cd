import { UseInterceptors } from '@nestjs/common';
import { CIRCUIT_INTERCEPTOR_METADATA } from '../circuit-breaker.constants.js';
import { CircuitBreakerInterceptor } from '../circuit-breaker.interceptor.js';
import { checkInterception, type CircuitInterception } from '../circuit-interception.js';
import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import type { UseCircuitBreakerOptions } from '../interfaces/circuit-breaker-admission-options.interface.js';
import { decorationSite } from './decoration-site.js';

/**
 * Runs the handler through the breaker `name`, as an interceptor (the pattern
 * Nest's documentation suggests): the handler's result is one call, its
 * first value or completion a success, its error classified as any call's
 * (an `HttpException` 4xx is the caller's mistake, not a failure), and the
 * breaker's `timeoutMs` its deadline. Works for HTTP (Express and Fastify),
 * microservice handlers, gateways and resolvers.
 *
 * - `key: (context) => string` picks a per-key breaker's child from the
 *   request (a header, a route parameter, the host): one child per tenant or host;
 * - `fallback: (error, context) => value | Promise | Observable` answers
 *   instead when the call is rejected, fails, times out or is overloaded.
 *
 * A rejection or a timeout without a fallback is the `CallRejectedError` or
 * `CallTimeoutError`, for the exception filter of the transport. On a method,
 * or a class (every handler; a method's own wins).
 *
 * @publicApi
 */
export function UseCircuitBreaker(
  name: string,
  options: UseCircuitBreakerOptions = {},
): ClassDecorator & MethodDecorator {
  return ((target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor) => {
    const use = checkInterception(
      decorationSite('@UseCircuitBreaker()', target, propertyKey),
      name,
      options,
    );
    // Decorators apply from the method up: the one found is the one written below this one.
    const earlier = Reflect.getOwnMetadata(
      CIRCUIT_INTERCEPTOR_METADATA,
      (descriptor === undefined ? target : descriptor.value) as object,
    ) as CircuitInterception | undefined;
    if (earlier !== undefined)
      throw new TypeError(
        circuitBreakerMessages.interceptionTwice(use.site, use.name, earlier.name),
      );
    if (descriptor === undefined) {
      Reflect.defineMetadata(CIRCUIT_INTERCEPTOR_METADATA, use, target);
      UseInterceptors(CircuitBreakerInterceptor)(target as never);
      return;
    }
    Reflect.defineMetadata(CIRCUIT_INTERCEPTOR_METADATA, use, descriptor.value as object);
    UseInterceptors(CircuitBreakerInterceptor)(target, propertyKey!, descriptor);
    return descriptor;
  }) as ClassDecorator & MethodDecorator;
}
