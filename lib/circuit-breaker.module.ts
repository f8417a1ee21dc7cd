import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import type { BreakerOptions } from './core/index.js';
import { CircuitBreakerEventPublisher } from './circuit-breaker-event.publisher.js';
import { CircuitBreakerTransitionLogger } from './circuit-breaker-transition.logger.js';
import { resolveHttpOptions } from './circuit-breaker-http.mapping.js';
import { CIRCUIT_BREAKER_HTTP_OPTIONS } from './circuit-breaker.constants.js';
import { CircuitBreakerExceptionFilter } from './circuit-breaker.exception-filter.js';
import { CircuitBreakerExplorer } from './circuit-breaker.explorer.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import {
  ConfigurableCircuitBreakerModule,
  type CircuitBreakerModuleExtras,
  type CIRCUIT_BREAKER_ASYNC_OPTIONS_TYPE,
  type CIRCUIT_BREAKER_OPTIONS_TYPE,
} from './circuit-breaker.module-definition.js';
import { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
import { getCircuitBreakerToken } from './decorators/inject-circuit-breaker.decorator.js';
import { FeatureDefinition } from './feature-definition.js';

const FOR_FEATURE = 'CircuitBreakerModule.forFeature()';

/**
 * Circuit breakers for a Nest application.
 *
 * - `forRoot(options?)` / `forRootAsync({ useFactory | useClass | useExisting, inject, imports })`:
 *   once, in the root module; global by default (`isGlobal`), `httpFilter: true`
 *   (or `{ details, body }`) registers `CircuitBreakerExceptionFilter` globally.
 * - `forFeature(['name', ...] | { name: options })`: makes named breakers
 *   injectable with `@InjectCircuitBreaker(name)` in a feature module.
 *
 * @publicApi
 */
@Module({})
export class CircuitBreakerModule extends ConfigurableCircuitBreakerModule {
  static forRoot(options: typeof CIRCUIT_BREAKER_OPTIONS_TYPE = {}): DynamicModule {
    const definition = withCoreProviders(super.forRoot(options), options.httpFilter);
    // The synchronous form knows its names statically: make each injectable by name.
    const named = Object.keys(options.breakers ?? {}).map((name) => breakerProvider(name, undefined, undefined));
    return {
      ...definition,
      providers: [...(definition.providers ?? []), ...named],
      exports: [...(definition.exports ?? []), ...named.map((p) => p.provide)],
    };
  }

  static forRootAsync(options: typeof CIRCUIT_BREAKER_ASYNC_OPTIONS_TYPE): DynamicModule {
    return withCoreProviders(super.forRootAsync(options), options.httpFilter);
  }

  static forFeature(breakers: readonly string[] | Record<string, BreakerOptions>): DynamicModule {
    const entries: [string, BreakerOptions | undefined][] = Array.isArray(breakers)
      ? breakers.map((name) => [name, undefined])
      : typeof breakers === 'object' && breakers !== null
        ? Object.entries(breakers as Record<string, BreakerOptions>)
        : [];
    if (entries.length === 0 && !Array.isArray(breakers)) throw new TypeError(circuitBreakerMessages.invalidFeature(breakers));
    for (const [name] of entries) if (typeof name !== 'string' || name === '') throw new TypeError(circuitBreakerMessages.invalidFeature(name));
    // The definition is read by the registry before any provider asks for a breaker by name (whatever the
    // module order), and is this call's identity: two calls giving options for one name conflict.
    const defined = entries.filter((entry): entry is [string, BreakerOptions] => entry[1] !== undefined);
    const definition = new FeatureDefinition(defined);
    const providers = entries.map(([name, options]) => breakerProvider(name, options, definition));
    const definitionProvider: Provider[] = defined.length === 0 ? [] : [{ provide: Symbol('CircuitBreakerFeature'), useValue: definition }];
    return { module: CircuitBreakerModule, providers: [...definitionProvider, ...providers], exports: providers.map((p) => p.provide) };
  }
}

function breakerProvider(name: string, options: BreakerOptions | undefined, source: FeatureDefinition | undefined): Provider & { provide: string } {
  return {
    provide: getCircuitBreakerToken(name),
    useFactory: (registry: CircuitBreakerRegistry) =>
      options === undefined ? registry.resolve(name, undefined, `${FOR_FEATURE} of "${name}"`) : registry.defineFeature(name, options, FOR_FEATURE, source),
    inject: [CircuitBreakerRegistry],
  };
}

/** The registry and the explorer belong to the root registration only, never to forFeature(). */
function withCoreProviders(definition: DynamicModule, httpFilter: CircuitBreakerModuleExtras['httpFilter']): DynamicModule {
  // The filter is provided even when off, so that a catch-all filter can delegate to it with the
  // module's options; an invalid httpFilter fails when its options are resolved, at start-up.
  const http: Provider[] = [
    { provide: CIRCUIT_BREAKER_HTTP_OPTIONS, useFactory: () => resolveHttpOptions(httpFilter) },
    CircuitBreakerExceptionFilter,
    ...(httpFilter === undefined || httpFilter === false ? [] : [{ provide: APP_FILTER, useExisting: CircuitBreakerExceptionFilter }]),
  ];
  return {
    ...definition,
    imports: [...(definition.imports ?? []), DiscoveryModule],
    providers: [...(definition.providers ?? []), CircuitBreakerExplorer, CircuitBreakerRegistry, CircuitBreakerTransitionLogger, CircuitBreakerEventPublisher, ...http],
    exports: [...(definition.exports ?? []), CircuitBreakerRegistry, CircuitBreakerExceptionFilter],
  };
}
