import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { CIRCUIT_BREAKER_METADATA } from './circuit-breaker.constants.js';
import type { DecoratedMethod } from './decorated-method.js';
import { FeatureDefinition } from './feature-definition.js';

/**
 * Finds every `@CircuitBreaker()` method of the application, so that the
 * registry can build their breakers at start-up: a bad option, an unknown name
 * under `strict`, or options set in two places fail `app.init()` instead of the
 * first call. Classes are known before any instance exists, so this works from
 * the registry's constructor, before other providers ask for breakers by name.
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerExplorer {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /**
   * The options every `forFeature({ name: options })` of the application gives,
   * read before any provider is built: value providers exist from the start.
   */
  featureDefinitions(): FeatureDefinition[] {
    const definitions: FeatureDefinition[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      if (wrapper.instance instanceof FeatureDefinition) definitions.push(wrapper.instance);
    }
    return definitions;
  }

  decoratedMethods(): DecoratedMethod[] {
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
