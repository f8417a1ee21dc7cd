import { Injectable } from '@nestjs/common';
import {
  APP_INTERCEPTOR,
  ApplicationConfig,
  DiscoveryService,
  MetadataScanner,
  ModulesContainer,
} from '@nestjs/core';
import {
  CONCURRENCY_LIMIT_METADATA,
  CIRCUIT_BREAKER_METADATA,
  CIRCUIT_BREAKER_ROOT,
  CIRCUIT_INTERCEPTOR_METADATA,
  INJECTED_BREAKERS_METADATA,
  REQUIRED_CIRCUITS_METADATA,
} from './circuit-breaker.constants.js';
import type { CircuitInterception } from './circuit-interception.js';
import type { CircuitRequirement } from './circuit-requirement.js';
import type { ConcurrencyLimitUse } from './concurrency-limit-use.js';
import { ConcurrencyLimitInterceptor } from './concurrency-limit.interceptor.js';

/** Where `@UseInterceptors()` keeps its interceptors (Nest's `INTERCEPTORS_METADATA`). */
const INTERCEPTORS_METADATA = '__interceptors__';
import type { BreakerOptions } from './core/index.js';
import type { BreakerInjection } from './decorators/inject-circuit-breaker.decorator.js';
import { FeatureDefinition } from './feature-definition.js';

/**
 * What the explorer reads of a `@CircuitBreaker()` method (the decorator's
 * `DecoratedMethod`): which breaker, with what options, from which site.
 *
 * @internal
 */
export interface ExploredMethod {
  readonly name: string;
  readonly options: BreakerOptions | undefined;
  /** Where the method names its breaker, for messages: `@CircuitBreaker() on Class.method`. */
  readonly site: string;
  /** Whether the decorator names the breaker (a reference to check), rather than taking `Class.method`. */
  readonly named: boolean;
  readonly key: unknown;
  /** Only reads admission (`@RequireCircuitBreaker()`): a per-key breaker without a key is checked at its family gate. */
  readonly familyGate?: boolean;
}

/**
 * What the explorer pushes what it finds to (the orchestrator), in this
 * order: forFeature() definitions, then decorated methods, then injections.
 *
 * @internal
 */
export interface DiscoveredBreakers {
  addFeature(definition: FeatureDefinition): void;
  addMethod(method: ExploredMethod): void;
  addInjection(name: string, site: string): void;
  addLimiterUse(use: ConcurrencyLimitUse): void;
}

/**
 * Walks the application's modules at start-up and pushes what defines or uses
 * a breaker to the orchestrator: forFeature() definitions, `@CircuitBreaker()`
 * methods and `@InjectCircuitBreaker()` names, so that a bad option, an unknown
 * name under `strict`, or options set at two sites fail `app.init()` instead of
 * the first call. Classes are known before any instance exists, so this works
 * from the orchestrator's constructor, before other providers ask for breakers
 * by name (which is why the orchestrator calls `explore()`, rather than this
 * explorer waiting for a lifecycle hook as @nestjs/schedule's does).
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerExplorer {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly modules: ModulesContainer,
    private readonly config: ApplicationConfig,
  ) {}

  /** Pushes every breaker definition and use of the application to `into`: features, then methods, then injections. */
  explore(into: DiscoveredBreakers): void {
    for (const definition of this.featureDefinitions()) into.addFeature(definition);
    for (const method of this.decoratedMethods()) into.addMethod(method);
    for (const [name, site] of this.injectedBreakers()) into.addInjection(name, site);
    for (const use of this.limiterUses()) into.addLimiterUse(use);
  }

  /**
   * The limiter every `@ConcurrencyLimit()` of the application's controllers
   * and providers names (on a method or the class), and the default limiter
   * for a class or method that binds `ConcurrencyLimitInterceptor` with
   * `@UseInterceptors()` without naming one.
   */
  limiterUses(): ConcurrencyLimitUse[] {
    const uses: ConcurrencyLimitUse[] = [];
    const usesOf = (on: object, site: string) => {
      const use = Reflect.getOwnMetadata(CONCURRENCY_LIMIT_METADATA, on) as
        ConcurrencyLimitUse | undefined;
      if (use !== undefined) return void uses.push(use);
      const interceptors = Reflect.getOwnMetadata(INTERCEPTORS_METADATA, on) as
        unknown[] | undefined;
      if (interceptors?.includes(ConcurrencyLimitInterceptor))
        uses.push({
          name: undefined,
          site: `@UseInterceptors(ConcurrencyLimitInterceptor) on ${site}`,
        });
    };
    for (const prototype of this.prototypes()) {
      const className = (prototype.constructor as { name: string }).name;
      usesOf(prototype.constructor, className);
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, unknown>)[name];
        if (typeof fn === 'function') usesOf(fn, `${className}.${name}`);
      }
    }
    if (this.limitsGlobally()) uses.push(...this.unnamedHandlers(APP_INTERCEPTOR));
    return uses;
  }

  /**
   * The default limiter for every handler that names none, when a global
   * binding of `ConcurrencyLimitInterceptor` that `limiterUses()` cannot see
   * exists: `APP_INTERCEPTOR` with `useFactory`, or `app.useGlobalInterceptors()`.
   * Read from Nest's `ApplicationConfig`, which holds the built interceptors:
   * once the application bootstraps, after `app.useGlobalInterceptors()`.
   */
  globalLimiterUses(): ConcurrencyLimitUse[] {
    // Bound with useClass or useExisting: limiterUses() reported it already, and it was checked at init.
    if (this.limitsGlobally()) return [];
    const binding = this.globalBinding();
    return binding === undefined ? [] : this.unnamedHandlers(binding);
  }

  /** Whether `ConcurrencyLimitInterceptor` is registered with `APP_INTERCEPTOR` (`useClass` or `useExisting`). */
  private limitsGlobally(): boolean {
    for (const [, wrapper] of this.appInterceptors()) if (bindsClass(wrapper)) return true;
    return false;
  }

  /**
   * How `ConcurrencyLimitInterceptor` is bound globally, for messages
   * (`APP_INTERCEPTOR`, `app.useGlobalInterceptors()`), or `undefined`.
   * Static `APP_INTERCEPTOR` instances and those of `app.useGlobalInterceptors()`
   * share one list; request-scoped ones are wrappers, built per request.
   */
  private globalBinding(): string | undefined {
    const provided = new Set<unknown>(
      [...this.appInterceptors()].map(([, wrapper]) => wrapper.instance),
    );
    for (const interceptor of this.config.getGlobalInterceptors())
      if (interceptor instanceof ConcurrencyLimitInterceptor)
        return provided.has(interceptor) ? APP_INTERCEPTOR : 'app.useGlobalInterceptors()';
    // Request-scoped: no instance before a request; a factory's is unknown until then.
    for (const wrapper of this.config.getGlobalRequestInterceptors())
      if (bindsClass(wrapper)) return APP_INTERCEPTOR;
    return undefined;
  }

  /** The `APP_INTERCEPTOR` providers of every module (Nest keys each `APP_INTERCEPTOR (UUID: ...)`). */
  private *appInterceptors(): Generator<[string, ProviderWrapper]> {
    for (const module of this.modules.values())
      for (const [token, wrapper] of module.providers)
        if (typeof token === 'string' && token.startsWith(APP_INTERCEPTOR)) yield [token, wrapper];
  }

  /**
   * The route and message handlers of the application's controllers that name
   * no limiter (on the method or the class): under the global interceptor each
   * uses the limiter `'default'`. One use per class is enough for the check.
   */
  private unnamedHandlers(binding: string): ConcurrencyLimitUse[] {
    const uses: ConcurrencyLimitUse[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const prototype = wrapper.metatype?.prototype as object | undefined;
      if (
        prototype === undefined ||
        Reflect.getMetadata(CONCURRENCY_LIMIT_METADATA, prototype.constructor)
      )
        continue;
      const className = (prototype.constructor as { name: string }).name;
      const handler = this.scanner.getAllMethodNames(prototype).find((name) => {
        const fn = (prototype as Record<string, unknown>)[name];
        return (
          typeof fn === 'function' &&
          (Reflect.hasMetadata('path', fn) || Reflect.hasMetadata('microservices:pattern', fn)) &&
          Reflect.getMetadata(CONCURRENCY_LIMIT_METADATA, fn) === undefined
        );
      });
      if (handler !== undefined)
        uses.push({
          name: undefined,
          site: `ConcurrencyLimitInterceptor (${binding}) on ${className}.${handler}`,
        });
    }
    return uses;
  }

  /** The prototypes of the application's providers and controllers, once each. */
  private prototypes(): Set<object> {
    const prototypes = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      // Request-scoped providers have no instance yet: their class is enough.
      const prototype =
        wrapper.metatype?.prototype ??
        (wrapper.instance ? Object.getPrototypeOf(wrapper.instance) : undefined);
      if (prototype !== undefined && prototype !== null && typeof prototype === 'object')
        prototypes.add(prototype);
    }
    return prototypes;
  }

  /**
   * Every root registration (`forRoot()` / `forRootAsync()`) of the
   * application, with the modules that import it. Nest builds one module per
   * call, each with its own registry; only the last global one is reachable by
   * injection, so more than one is always a mistake.
   */
  rootRegistrations(): RootRegistration[] {
    const modules = [...this.modules.values()];
    const registrations: RootRegistration[] = [];
    for (const module of modules) {
      const tag = module.providers.get(CIRCUIT_BREAKER_ROOT)?.instance as RootTag | undefined;
      if (tag === undefined) continue;
      // Declared imports only: Nest also binds every global module into every module's `imports`.
      const importers = modules
        .filter((other) => other !== module && declaresImport(declaredImports(other), tag))
        .map((other) => other.metatype.name);
      registrations.push({ method: tag.method, importers });
    }
    return registrations;
  }

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

  /**
   * Every `@InjectCircuitBreaker(name)` of the classes this application builds
   * with injection (providers, controllers, guards, interceptors, pipes,
   * filters), inherited ones included; the first site of each name.
   */
  injectedBreakers(): Map<string, string> {
    const injections = new Map<string, string>();
    for (const module of this.modules.values()) {
      for (const wrapper of [
        ...module.providers.values(),
        ...module.controllers.values(),
        ...module.injectables.values(),
      ]) {
        const metatype = wrapper.metatype;
        if (typeof metatype !== 'function') continue;
        // Up the class chain: a subclass without its own constructor is built with its base's parameters.
        for (
          let type: unknown = metatype;
          typeof type === 'function' && type !== Function.prototype;
          type = Object.getPrototypeOf(type)
        ) {
          const own = Reflect.getOwnMetadata(INJECTED_BREAKERS_METADATA, type) as
            BreakerInjection[] | undefined;
          for (const { name, site } of own ?? [])
            if (!injections.has(name)) injections.set(name, site);
        }
      }
    }
    return injections;
  }

  /**
   * Every `@CircuitBreaker()` method of the application's providers and
   * controllers, once each, and every breaker their `@RequireCircuitBreaker()` and
   * `@UseCircuitBreaker()` name (on a method or the class).
   */
  decoratedMethods(): ExploredMethod[] {
    const prototypes = this.prototypes();
    const methods = new Set<ExploredMethod>();
    const uses = new Set<CircuitRequirement | CircuitInterception>();
    const usesOf = (on: object) => {
      for (const required of (Reflect.getMetadata(REQUIRED_CIRCUITS_METADATA, on) ??
        []) as CircuitRequirement[])
        uses.add(required);
      const interception = Reflect.getMetadata(CIRCUIT_INTERCEPTOR_METADATA, on) as
        CircuitInterception | undefined;
      if (interception !== undefined) uses.add(interception);
    };
    for (const prototype of prototypes) {
      usesOf(prototype.constructor);
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, unknown>)[name];
        if (typeof fn !== 'function') continue;
        const method = Reflect.getMetadata(CIRCUIT_BREAKER_METADATA, fn) as
          ExploredMethod | undefined;
        if (method !== undefined) methods.add(method);
        usesOf(fn);
      }
    }
    // @RequireCircuitBreaker() and @UseCircuitBreaker() name breakers as a decorator does: checked alike.
    for (const use of uses)
      methods.add({
        name: use.name,
        options: undefined,
        site: use.site,
        named: true,
        key: use.key,
        familyGate: !('fallback' in use),
      });
    return [...methods];
  }
}

/** The value a root registration provides under `CIRCUIT_BREAKER_ROOT`: one object per `forRoot()` / `forRootAsync()` call. @internal */
export interface RootTag {
  readonly method: 'forRoot()' | 'forRootAsync()';
}

/**
 * What a module declares in `imports`: its class's `@Module({ imports })`, and
 * for a dynamic module what its `register()`/`forRoot()` returned (read from
 * Nest's container, which `Module` keeps; without it, only the class's own).
 */
function declaredImports(module: Module): unknown[] {
  const declared: unknown[] = [];
  try {
    const own: unknown = Reflect.getMetadata('imports', module.metatype);
    if (Array.isArray(own)) declared.push(...(own as unknown[]));
    const container = (
      module as unknown as {
        container?: { getDynamicMetadataByToken?: (token: string, key: string) => unknown };
      }
    ).container;
    const dynamic = container?.getDynamicMetadataByToken?.(module.token, 'imports');
    if (Array.isArray(dynamic)) declared.push(...(dynamic as unknown[]));
  } catch {
    // A module whose metadata cannot be read is simply not named.
  }
  return declared;
}

/** A module of Nest's container, as ModulesContainer holds it. */
type Module = NonNullable<ReturnType<ModulesContainer['get']>>;

/** Whether an `APP_INTERCEPTOR` provider is `useClass` or `useExisting` of `ConcurrencyLimitInterceptor`. */
function bindsClass(wrapper: { metatype: unknown; inject?: unknown }): boolean {
  const inject = wrapper.inject as unknown[] | undefined;
  return (
    wrapper.metatype === ConcurrencyLimitInterceptor ||
    (inject?.length === 1 && inject[0] === ConcurrencyLimitInterceptor)
  );
}

/** One provider of a module, as Nest's container wraps it (Nest does not export the class). */
type ProviderWrapper = Module['providers'] extends Map<unknown, infer Wrapper> ? Wrapper : never;

/** Whether `imports` holds the registration tagged `tag`. */
function declaresImport(imports: readonly unknown[], tag: RootTag): boolean {
  try {
    return imports.some((entry: unknown) => {
      const providers =
        typeof entry === 'object' && entry !== null
          ? (entry as { providers?: unknown }).providers
          : undefined;
      return (
        Array.isArray(providers) &&
        providers.some(
          (p: unknown) =>
            typeof p === 'object' &&
            p !== null &&
            (p as { provide?: unknown; useValue?: unknown }).provide === CIRCUIT_BREAKER_ROOT &&
            (p as { useValue?: unknown }).useValue === tag,
        )
      );
    });
  } catch {
    // A module whose metadata cannot be read is simply not named.
    return false;
  }
}

/** One `forRoot()` / `forRootAsync()` module of the application and the modules that import it. @internal */
export interface RootRegistration {
  readonly method: RootTag['method'];
  readonly importers: readonly string[];
}
