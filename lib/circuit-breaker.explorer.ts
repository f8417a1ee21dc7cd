import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { CIRCUIT_BREAKER_METADATA } from './circuit-breaker.constants.js';
import { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
import type { DecoratedMethod } from './decorated-method.js';

/**
 * Finds every `@CircuitBreaker()` method of the application at start-up and
 * builds its breaker, so that a bad option, an unknown name under `strict`, or
 * options set in two places fail `app.init()` instead of the first call.
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: CircuitBreakerRegistry,
  ) {}

  onModuleInit(): void {
    for (const method of this.decoratedMethods()) this.registry.resolve(method.name, method.options, method.origin);
  }

  private decoratedMethods(): DecoratedMethod[] {
    const prototypes = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      // Request-scoped providers have no instance yet: their class is enough.
      const prototype = wrapper.metatype?.prototype ?? (wrapper.instance ? Object.getPrototypeOf(wrapper.instance) : undefined);
      if (prototype !== undefined && prototype !== null && typeof prototype === 'object') prototypes.add(prototype);
    }
    const methods = new Set<DecoratedMethod>();
    for (const prototype of prototypes) {
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, unknown>)[name];
        const method = typeof fn === 'function' ? (Reflect.getMetadata(CIRCUIT_BREAKER_METADATA, fn) as DecoratedMethod | undefined) : undefined;
        if (method !== undefined) methods.add(method);
      }
    }
    return [...methods];
  }
}
