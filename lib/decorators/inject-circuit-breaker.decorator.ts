import { Inject } from '@nestjs/common';
import {
  CIRCUIT_BREAKER_TOKEN_PREFIX,
  INJECTED_BREAKERS_METADATA,
} from '../circuit-breaker.constants.js';
import { circuitBreakerMessages } from '../circuit-breaker.messages.js';

/**
 * The DI token of the breaker named `name`, for `moduleRef.get()` or custom providers.
 *
 * @publicApi
 */
export function getCircuitBreakerToken(name: string): string {
  return `${CIRCUIT_BREAKER_TOKEN_PREFIX}${name}`;
}

/** One `@InjectCircuitBreaker(name)` of a class: the name, and the site messages show. @internal */
export interface BreakerInjection {
  readonly name: string;
  readonly site: string;
}

/**
 * Every name `@InjectCircuitBreaker()` was given in this process, in order:
 * `forRoot()` / `forRootAsync()` provide a token for each, so that no
 * `forFeature([name])` is needed. Which of them an application really uses is
 * read per application, from its classes (see `CircuitBreakerExplorer`).
 *
 * @internal
 */
export const injectedBreakerNames = new Set<string>();

/**
 * Injects the breaker named `name` (constructor parameter or property). The
 * root module provides it, whether registered with `forRoot()` or
 * `forRootAsync()`; `forFeature()` is only needed to define options in a
 * feature module, or for a class Nest does not build as a provider,
 * controller or enhancer.
 *
 * @publicApi
 */
export function InjectCircuitBreaker(name: string): PropertyDecorator & ParameterDecorator {
  if (typeof name !== 'string' || name === '')
    throw new TypeError(circuitBreakerMessages.invalidInjectName(name));
  const inject = Inject(getCircuitBreakerToken(name));
  return ((target: object, key: string | symbol | undefined, index?: number) => {
    const type = (typeof target === 'function' ? target : target.constructor) as { name?: string };
    injectedBreakerNames.add(name);
    // Own metadata, copied: a subclass adds to its own list, never to its base class's.
    const own =
      (Reflect.getOwnMetadata(INJECTED_BREAKERS_METADATA, type) as
        BreakerInjection[] | undefined) ?? [];
    Reflect.defineMetadata(
      INJECTED_BREAKERS_METADATA,
      [...own, { name, site: circuitBreakerMessages.injectionSite(type.name) }],
      type,
    );
    (inject as (t: object, k: string | symbol | undefined, i?: number) => void)(target, key, index);
  }) as PropertyDecorator & ParameterDecorator;
}
