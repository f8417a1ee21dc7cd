import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import type { BreakerOptions, ConcurrencyLimitOptions } from './core/index.js';
import { CircuitBreakerEventPublisher } from './circuit-breaker-event.publisher.js';
import { CircuitBreakerTransitionLogger } from './circuit-breaker-transition.logger.js';
import { resolveHttpOptions } from './circuit-breaker-http.mapping.js';
import {
  CIRCUIT_BREAKER_HTTP_OPTIONS,
  CIRCUIT_BREAKER_LOOKUP,
  CIRCUIT_BREAKER_ROOT,
} from './circuit-breaker.constants.js';
import { CircuitBreakerExceptionFilter } from './circuit-breaker.exception-filter.js';
import { CircuitBreakerExplorer, type RootTag } from './circuit-breaker.explorer.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import {
  ConfigurableCircuitBreakerModule,
  type CIRCUIT_BREAKER_ASYNC_OPTIONS_TYPE,
} from './circuit-breaker.module-definition.js';
import type {
  CircuitBreakerModuleAsyncOptions,
  CircuitBreakerModuleOptions,
} from './interfaces/circuit-breaker-module-options.interface.js';
import { CircuitBreakerEvents } from './circuit-breaker.events.js';
import { FOR_FEATURE, MODULE_KEYS } from './circuit-breaker.options.js';
import { CircuitBreakerOrchestrator } from './circuit-breaker.orchestrator.js';
import { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
import { OptionChecker, pathKey } from './core/options/option-checker.js';
import { breakerOptionChecker, copyBreakerOptions } from './core/options/resolve-options.js';
import {
  getCircuitBreakerToken,
  injectedBreakerNames,
} from './decorators/inject-circuit-breaker.decorator.js';
import { FeatureDefinition } from './feature-definition.js';
import { checkLimiterDefinitions, LIMITERS_FOR_FEATURE } from './concurrency-limit.options.js';
import { concurrencyLimitMessages } from './concurrency-limit.messages.js';
import { HTTP_FILTER_FIX } from './circuit-breaker-http.mapping.js';

const EXTRAS = ['isGlobal', 'httpFilter'] as const;

/**
 * Circuit breakers for a Nest application.
 *
 * - `forRoot(options?)` / `forRootAsync({ useFactory | useClass | useExisting, inject, imports })`:
 *   once per application, in the root module (a second registration fails
 *   start-up, naming the importing modules); global by default (`isGlobal`), `httpFilter: true`
 *   (or `{ details, body }`) registers `CircuitBreakerExceptionFilter` globally.
 * - `forFeature(['name', ...] | { name: options })`: defines breakers in a
 *   feature module, or names them for a class Nest does not build as a
 *   provider, controller or enhancer; `@InjectCircuitBreaker(name)` needs no
 *   forFeature() otherwise (the root module provides every injected name).
 * - `forFeatureLimiters({ name: options })`: defines concurrency limiters in a
 *   feature module, as `forRoot({ limiters })` does in the root module.
 *
 * @publicApi
 */
@Module({})
export class CircuitBreakerModule extends ConfigurableCircuitBreakerModule {
  static forRoot(given: CircuitBreakerModuleOptions = {}): DynamicModule {
    const check = new OptionChecker('CircuitBreakerModule');
    // A copy read once: Nest and the registry then work on plain data. Breaker options are checked by the registry, at start-up.
    const options = check.record(
      '',
      given,
      [...MODULE_KEYS, ...EXTRAS],
      'an object',
      false,
    ) as CircuitBreakerModuleOptions;
    checkExtras(check, options);
    const definition = withCoreProviders(super.forRoot(options), options.httpFilter, 'forRoot()');
    // The synchronous form knows its names statically: make each injectable by name, beside those classes inject.
    const names =
      options.breakers === undefined
        ? []
        : check
            .entries('breakers', options.breakers, 'a record of breaker name → options')
            .map(([name]) => name);
    return withNamedProviders(definition, names);
  }

  static forRootAsync(options: CircuitBreakerModuleAsyncOptions): DynamicModule {
    const check = new OptionChecker('CircuitBreakerModule.forRootAsync()');
    if (!check.isPlainObject('options', options))
      check.invalid(
        'options',
        options,
        '{ useFactory | useClass | useExisting, inject?, imports?, isGlobal?, httpFilter? }',
        false,
      );
    checkExtras(check, {
      isGlobal: check.read(options, 'isGlobal', 'isGlobal'),
      httpFilter: check.read(options, 'httpFilter', 'httpFilter'),
    });
    return withNamedProviders(
      withCoreProviders(
        super.forRootAsync(options as typeof CIRCUIT_BREAKER_ASYNC_OPTIONS_TYPE),
        options.httpFilter,
        'forRootAsync()',
      ),
      [],
    );
  }

  static forFeature(breakers: readonly string[] | Record<string, BreakerOptions>): DynamicModule {
    const entries = featureEntries(breakers);
    // The definition is read by the registry before any provider asks for a breaker by name (whatever the
    // module order), and is this call's identity: two calls giving options for one name conflict.
    const defined = entries.filter(
      (entry): entry is [string, BreakerOptions] => entry[1] !== undefined,
    );
    const definition = new FeatureDefinition(defined);
    const providers = entries.map(([name, options]) => breakerProvider(name, options, definition));
    const definitionProvider: Provider[] =
      defined.length === 0
        ? []
        : [{ provide: Symbol('CircuitBreakerFeature'), useValue: definition }];
    return {
      module: CircuitBreakerModule,
      providers: [...definitionProvider, ...providers],
      exports: providers.map((p) => p.provide),
    };
  }

  /**
   * Defines concurrency limiters in a feature module (for
   * `@ConcurrencyLimit(name)`), as `forRoot({ limiters })` does: checked at
   * start-up; a name defined twice is an error.
   */
  static forFeatureLimiters(limiters: Record<string, ConcurrencyLimitOptions>): DynamicModule {
    const check = new OptionChecker(LIMITERS_FOR_FEATURE);
    if (!check.isPlainObject('limiters', limiters))
      throw new TypeError(concurrencyLimitMessages.invalidFeature(limiters));
    const definitions = checkLimiterDefinitions(check, limiters, false);
    if (definitions.length === 0)
      throw new TypeError(concurrencyLimitMessages.invalidFeature(limiters));
    return {
      module: CircuitBreakerModule,
      providers: [
        {
          provide: Symbol('CircuitBreakerLimiterFeature'),
          useValue: new FeatureDefinition([], definitions),
        },
      ],
    };
  }
}

function checkExtras(
  check: OptionChecker,
  options: { isGlobal?: unknown; httpFilter?: unknown },
): void {
  if (options.isGlobal !== undefined) check.boolean('isGlobal', options.isGlobal);
  // Its keys are checked with the module's options, at start-up (resolveHttpOptions); here only its shape.
  const httpFilter = options.httpFilter;
  if (
    httpFilter !== undefined &&
    typeof httpFilter !== 'boolean' &&
    !check.isPlainObject('httpFilter', httpFilter)
  ) {
    throw new TypeError(
      circuitBreakerMessages.invalidHttpFilter('httpFilter', httpFilter, HTTP_FILTER_FIX),
    );
  }
}

/**
 * The names and options forFeature() was given, read once and checked in
 * their shape (the values against the module's defaults at start-up). A name
 * whose options are `undefined` is only named, as in the array form.
 */
function featureEntries(breakers: unknown): [string, BreakerOptions | undefined][] {
  const check = new OptionChecker(FOR_FEATURE);
  const invalid = (value: unknown): never => {
    throw new TypeError(circuitBreakerMessages.invalidFeature(value));
  };
  let array: boolean;
  try {
    array = Array.isArray(breakers);
  } catch {
    return invalid(breakers);
  }
  if (array) {
    const list = breakers as readonly unknown[];
    const length = check.read(list, 'length', 'length') as number;
    const names: [string, undefined][] = [];
    for (let i = 0; i < length; i++) {
      const name = check.read(list, String(i), `[${i}]`);
      if (typeof name !== 'string' || name === '') invalid(name);
      names.push([name as string, undefined]);
    }
    return names;
  }
  if (!check.isPlainObject('breakers', breakers)) return invalid(breakers);
  let keys: (string | symbol)[];
  try {
    keys = Reflect.ownKeys(breakers).filter((key) =>
      Object.prototype.propertyIsEnumerable.call(breakers, key),
    );
  } catch {
    return invalid(breakers);
  }
  const entries: [string, BreakerOptions | undefined][] = [];
  for (const key of keys) {
    if (typeof key === 'symbol' || key === '') return invalid(key);
    const at = pathKey(key).replace(/^\./, '');
    const value = check.read(breakers, key, at);
    const subject = circuitBreakerMessages.definitionSubject(key, FOR_FEATURE);
    entries.push([
      key,
      value === undefined
        ? undefined
        : copyBreakerOptions(
            breakerOptionChecker(key, {
              subject,
              pathOf: (o) => (o === 'options' ? at : `${at}.${o}`),
            }),
            value,
          ),
    ]);
  }
  if (entries.length === 0) throw new TypeError(circuitBreakerMessages.emptyFeature());
  return entries;
}

function breakerProvider(
  name: string,
  options: BreakerOptions | undefined,
  source: FeatureDefinition | undefined,
): Provider & { provide: string } {
  return {
    provide: getCircuitBreakerToken(name),
    useFactory: (orchestrator: CircuitBreakerOrchestrator) =>
      options === undefined
        ? orchestrator.use(name, circuitBreakerMessages.featureSite(name))
        : orchestrator.defineFeature(name, options, FOR_FEATURE, source),
    inject: [CircuitBreakerOrchestrator],
  };
}

/**
 * A token for every breaker name `defined` here or given to
 * `@InjectCircuitBreaker()` by a class declared so far (every class the
 * application's modules import is declared before their `@Module()` runs), so
 * that injection by name needs no `forFeature()`.
 */
function withNamedProviders(definition: DynamicModule, defined: readonly string[]): DynamicModule {
  const named: (Provider & { provide: string })[] = [
    ...new Set([...defined, ...injectedBreakerNames]),
  ].map((name) => ({
    provide: getCircuitBreakerToken(name),
    useFactory: (orchestrator: CircuitBreakerOrchestrator) => orchestrator.provided(name),
    inject: [CircuitBreakerOrchestrator],
  }));
  return {
    ...definition,
    providers: [...(definition.providers ?? []), ...named],
    exports: [...(definition.exports ?? []), ...named.map((p) => p.provide)],
  };
}

/**
 * The registry, its orchestrator, the events and the explorer belong to the root
 * registration only, never to forFeature(). The orchestrator injects the registry
 * (under an internal token) and fills it; `CircuitBreakerRegistry` itself is
 * provided through the orchestrator, so that a provider that injects the
 * registry is built after the module's breakers are defined.
 */
function withCoreProviders(
  definition: DynamicModule,
  httpFilter: CircuitBreakerModuleOptions['httpFilter'],
  method: RootTag['method'],
): DynamicModule {
  // The filter is provided even when off, so that a catch-all filter can delegate to it with the
  // module's options; an invalid httpFilter fails when its options are resolved, at start-up.
  const http: Provider[] = [
    { provide: CIRCUIT_BREAKER_HTTP_OPTIONS, useFactory: () => resolveHttpOptions(httpFilter) },
    CircuitBreakerExceptionFilter,
    ...(httpFilter === undefined || httpFilter === false
      ? []
      : [{ provide: APP_FILTER, useExisting: CircuitBreakerExceptionFilter }]),
  ];
  // One tag per call: the registry finds every root registration, and who imports it, to refuse a second one.
  const tag: RootTag = { method };
  return {
    ...definition,
    imports: [...(definition.imports ?? []), DiscoveryModule],
    providers: [
      ...(definition.providers ?? []),
      { provide: CIRCUIT_BREAKER_ROOT, useValue: tag },
      CircuitBreakerExplorer,
      CircuitBreakerEvents,
      { provide: CIRCUIT_BREAKER_LOOKUP, useClass: CircuitBreakerRegistry },
      CircuitBreakerOrchestrator,
      {
        provide: CircuitBreakerRegistry,
        useFactory: (registry: CircuitBreakerRegistry) => registry,
        inject: [CIRCUIT_BREAKER_LOOKUP, CircuitBreakerOrchestrator],
      },
      CircuitBreakerTransitionLogger,
      CircuitBreakerEventPublisher,
      ...http,
    ],
    exports: [
      ...(definition.exports ?? []),
      CircuitBreakerRegistry,
      CircuitBreakerOrchestrator,
      CircuitBreakerEvents,
      CircuitBreakerExceptionFilter,
    ],
  };
}
