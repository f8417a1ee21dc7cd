import { Inject, Optional } from '@nestjs/common';
import { CIRCUIT_BREAKER_METADATA, REGISTRY_PROPERTY } from '../circuit-breaker.constants.js';
import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import { DecoratedMethod } from '../decorated-method.js';
import type { CircuitBreakerMethodOptions } from '../interfaces/circuit-breaker-method-options.interface.js';

/**
 * Runs every call of the method through a named breaker.
 *
 * - `@CircuitBreaker()`: the breaker is named `ClassName.methodName`;
 * - `@CircuitBreaker('payments')`: a named breaker, shared by every method that names it;
 * - `@CircuitBreaker({ name?, fallback?, key?, ...breaker options })`.
 *
 * Works on providers, controller route handlers (above or below `@Get()`),
 * request-scoped providers, and methods returning a Promise (the breaker's
 * deadline applies), an Observable (each subscription is one call, through
 * `circuitBreaker()`) or a plain value (stays synchronous; a throw is the
 * failure; no deadline).
 *
 * @publicApi
 */
export function CircuitBreaker(nameOrOptions?: string | CircuitBreakerMethodOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const className = typeof target === 'function' ? target.name : target.constructor.name;
    const place = `${className}.${String(propertyKey)}`;
    const original = descriptor.value as unknown;
    if (typeof original !== 'function') throw new TypeError(circuitBreakerMessages.notAMethod(place));
    const { name = place, fallback, key, ...breakerOptions } = normalize(nameOrOptions, place);
    validateMethodOptions(target, place, name, fallback, key);

    const method = new DecoratedMethod(
      name,
      Object.keys(breakerOptions).length === 0 ? undefined : breakerOptions,
      place,
      fallback,
      key,
      Reflect.getMetadata('design:returntype', target, propertyKey),
      original as (...args: unknown[]) => unknown,
    );
    // A named `function`, not an arrow: `this` is the instance Nest (or the caller) calls it on.
    const call = original as (...a: unknown[]) => unknown;
    // A Promise method without fallback or key, the common case, takes the shortest way to the breaker.
    const wrapped = method.direct
      ? function (this: Record<symbol, unknown>, ...args: unknown[]): unknown {
          return method.invokeDirect(this, call, args);
        }
      : function (this: Record<symbol, unknown>, ...args: unknown[]): unknown {
          return method.invoke(this, call, args);
        };
    // Nest reads route, guard and pipe metadata from the function it finds on the prototype.
    for (const metadataKey of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapped);
    }
    Reflect.defineMetadata(CIRCUIT_BREAKER_METADATA, method, wrapped);
    Object.defineProperty(wrapped, 'name', { value: (original as { name: string }).name, configurable: true });
    Object.defineProperty(wrapped, 'length', { value: (original as { length: number }).length, configurable: true });
    descriptor.value = wrapped as never;

    // Nest injects the registry of the application that creates the instance.
    if (typeof target !== 'function') {
      Inject(CircuitBreakerRegistry)(target, REGISTRY_PROPERTY);
      Optional()(target, REGISTRY_PROPERTY);
    }
    return descriptor;
  };
}

function normalize(nameOrOptions: string | CircuitBreakerMethodOptions | undefined, place: string): CircuitBreakerMethodOptions {
  if (nameOrOptions === undefined) return {};
  if (typeof nameOrOptions === 'string') {
    if (nameOrOptions === '') throw new TypeError(circuitBreakerMessages.invalidDecoratorOption(place, 'name', 'a non-empty string'));
    return { name: nameOrOptions };
  }
  if (typeof nameOrOptions !== 'object' || nameOrOptions === null) {
    throw new TypeError(circuitBreakerMessages.invalidDecoratorOption(place, 'options', 'a breaker name or an options object'));
  }
  return nameOrOptions;
}

function validateMethodOptions(target: object, place: string, name: unknown, fallback: unknown, key: unknown): void {
  if (typeof name !== 'string' || name === '') throw new TypeError(circuitBreakerMessages.invalidDecoratorOption(place, 'name', 'a non-empty string'));
  if (key !== undefined && typeof key !== 'function') throw new TypeError(circuitBreakerMessages.invalidDecoratorOption(place, 'key', 'a function of the arguments returning a string'));
  if (fallback === undefined || typeof fallback === 'function') return;
  if (typeof fallback === 'string') {
    // Legacy decorators run once the class body is complete, so every method is already there.
    if (typeof (target as Record<string, unknown>)[fallback] !== 'function') {
      throw new TypeError(circuitBreakerMessages.missingFallbackMethod(place, fallback));
    }
    return;
  }
  const lastGood = typeof fallback === 'object' && fallback !== null ? (fallback as { lastGood?: Record<string, unknown> }).lastGood : undefined;
  if (lastGood === undefined || typeof lastGood !== 'object' || lastGood === null) {
    throw new TypeError(circuitBreakerMessages.invalidDecoratorOption(place, 'fallback', 'a method name, a function, or { lastGood: { maxAgeMs, maxEntries? } }'));
  }
  const { maxAgeMs, maxEntries, key: cacheKey } = lastGood;
  if (typeof maxAgeMs !== 'number' || !(maxAgeMs > 0) || !Number.isFinite(maxAgeMs)) {
    throw new TypeError(circuitBreakerMessages.invalidDecoratorOption(place, 'fallback.lastGood.maxAgeMs', `a positive number of milliseconds, got ${String(maxAgeMs)}`));
  }
  if (maxEntries !== undefined && (typeof maxEntries !== 'number' || !Number.isInteger(maxEntries) || maxEntries < 1)) {
    throw new TypeError(circuitBreakerMessages.invalidDecoratorOption(place, 'fallback.lastGood.maxEntries', `an integer >= 1, got ${String(maxEntries)}`));
  }
  if (cacheKey !== undefined && typeof cacheKey !== 'function') {
    throw new TypeError(circuitBreakerMessages.invalidDecoratorOption(place, 'fallback.lastGood.key', 'a function of the arguments returning a string'));
  }
}
