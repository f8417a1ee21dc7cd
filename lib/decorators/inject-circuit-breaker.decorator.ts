import { Inject } from '@nestjs/common';
import { CIRCUIT_BREAKER_TOKEN_PREFIX } from '../circuit-breaker.constants.js';

/**
 * The DI token of the breaker named `name`, for `moduleRef.get()` or custom providers.
 *
 * @publicApi
 */
export function getCircuitBreakerToken(name: string): string {
  return `${CIRCUIT_BREAKER_TOKEN_PREFIX}${name}`;
}

/**
 * Injects the breaker named `name`: one defined in the synchronous
 * `forRoot({ breakers })`, or made available with `forFeature()`.
 *
 * @publicApi
 */
export function InjectCircuitBreaker(name: string): PropertyDecorator & ParameterDecorator {
  return Inject(getCircuitBreakerToken(name));
}
