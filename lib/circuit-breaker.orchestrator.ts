import { breakerChannels } from './diagnostics/breaker-channels.js';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import {
  Breaker,
  BreakerConfigError,
  ConcurrencyLimiter,
  HealthCheckScheduler,
  type BreakerDeps,
  type BreakerOptions,
  type ReconfiguredEvent,
} from './core/index.js';
import {
  breakerOptionChecker,
  copyBreakerOptions,
  resolveBreakerOptions,
} from './core/options/resolve-options.js';
import {
  planReload,
  RELOAD,
  sameOptions,
  type CircuitBreakerConfigTree,
  type CircuitBreakerReload,
} from './circuit-breaker.reload.js';
import { CircuitBreakerEvents } from './circuit-breaker.events.js';
import { reportError } from './circuit-breaker-hook-error.reporter.js';
import {
  CircuitBreakerExplorer,
  type DiscoveredBreakers,
  type ExploredMethod,
} from './circuit-breaker.explorer.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import {
  checkBreakerDefinition,
  FOR_FEATURE,
  FOR_ROOT,
  mergeOptions,
  sitePath,
  validateModuleOptions,
} from './circuit-breaker.options.js';
import { closestName } from './core/options/closest-name.js';
import type { LimiterDefinition } from './concurrency-limit.options.js';
import type { ConcurrencyLimitUse } from './concurrency-limit-use.js';
import { concurrencyLimitMessages } from './concurrency-limit.messages.js';
import type { CriticalityOptions } from './interfaces/concurrency-limit-options.interface.js';
import { DEFAULT_LIMITER } from './circuit-breaker.constants.js';
import { fleetOf } from './circuit-breaker.fleet.js';
import type { FleetControl } from './interfaces/fleet-control.interface.js';
import type { FeatureDefinition } from './feature-definition.js';
import type { CircuitBreakerModuleOptions } from './interfaces/circuit-breaker-module-options.interface.js';
import { CIRCUIT_BREAKER_MODULE_OPTIONS } from './circuit-breaker.module-definition.js';
import { CIRCUIT_BREAKER_LOOKUP } from './circuit-breaker.constants.js';
import { CircuitBreakerRegistry, type RegistryOrchestrator } from './circuit-breaker.registry.js';

/**
 * Where a breaker's options were given: the site messages name
 * (`@CircuitBreaker() on BillingService.charge`, `CircuitBreakerModule.forFeature()`)
 * and the source that tells two definitions apart when two sites read the same
 * (two forFeature() calls).
 */
interface DefinitionSite {
  readonly site: string;
  readonly source: unknown;
}

/**
 * Builds the breakers of one application and runs their life, as
 * `SchedulerOrchestrator` does for @nestjs/schedule: checks the module's
 * options, defines the breakers every site of the application gives options
 * for (forRoot, forFeature, decorators, `getOrCreate()`), refuses a breaker
 * defined at two sites, checks every use by name at start-up (`onModuleInit`),
 * hydrates shared breakers before the application serves
 * (`onApplicationBootstrap`), and disposes of them at shutdown
 * (`onApplicationShutdown`: after the server stopped taking requests, so that
 * calls still in flight keep their breakers). The breakers it builds go to the
 * registry it injects, a plain lookup, and to the application's
 * `CircuitBreakerEvents`.
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerOrchestrator
  implements
    DiscoveredBreakers,
    RegistryOrchestrator,
    OnModuleInit,
    OnApplicationBootstrap,
    OnApplicationShutdown
{
  /** The store's orders to every replica, when it has them. */
  readonly fleet: FleetControl | undefined;
  /** The module's options as checked: a plain copy, so that what was validated is what is used. */
  private options: CircuitBreakerModuleOptions;
  /** Where each breaker was defined (its options set), for conflict messages. */
  private readonly definitionSites = new Map<string, DefinitionSite>();
  /** Each breaker's own options, before the module's defaults: what `reconfigure()` patches. */
  private readonly ownOptions = new Map<string, BreakerOptions | undefined>();
  /** Breakers that share their state through the store; hydrated at bootstrap, or when created after it. */
  private readonly shared: Breaker[] = [];
  /** One deps object for every breaker (one for those shared through the store): their environment is checked and held once. */
  private readonly localDeps: BreakerDeps;
  private sharedDeps: BreakerDeps | undefined;
  private bootstrapped = false;
  /** The application's @CircuitBreaker() methods, found at construction. */
  private readonly methods: ExploredMethod[] = [];
  /** Names configured centrally (forRoot `breakers`, forFeature definitions): with any, an undefined name is likely a typo. */
  private readonly configured = new Set<string>();
  /** The breaker names this application's classes inject with `@InjectCircuitBreaker()`, with the first site of each. */
  private readonly injectionSites = new Map<string, string>();
  /** Undefined names already reported, so that each is reported once. */
  private readonly reported = new Set<string>();
  /** Where each concurrency limiter was defined, for conflict messages. */
  private readonly limiterSites = new Map<string, string>();
  /** The limiters the application's `@ConcurrencyLimit()` and interceptor bindings name, checked at init. */
  private readonly limiterUses: ConcurrencyLimitUse[] = [];

  /** The module's clock and store, as checked: what the dashboard dates its state with and asks about the fleet. */
  get clock(): CircuitBreakerModuleOptions['clock'] {
    return this.options.clock;
  }

  get store(): CircuitBreakerModuleOptions['store'] {
    return this.options.store;
  }

  /** How a request's criticality is read, as the module's options say. */
  get criticality(): CriticalityOptions {
    const { criticalityHeader, criticalityOf } = this.options;
    return { criticalityHeader, criticalityOf };
  }

  constructor(
    @Inject(CIRCUIT_BREAKER_MODULE_OPTIONS) options: CircuitBreakerModuleOptions,
    @Inject(CIRCUIT_BREAKER_LOOKUP) private readonly registry: CircuitBreakerRegistry,
    private readonly events: CircuitBreakerEvents,
    @Optional() private readonly explorer?: CircuitBreakerExplorer,
  ) {
    // Before anything else: two roots would build two registries, and the last would silently win.
    const roots = explorer?.rootRegistrations() ?? [];
    if (roots.length > 1) throw new Error(circuitBreakerMessages.duplicateRoot(roots));
    const checked = validateModuleOptions(options);
    this.options = checked.options;
    // One timer for the health checks of every breaker of the application, shared or not.
    this.localDeps = {
      clock: this.options.clock,
      reportError,
      faultInjection: this.options.faultInjection,
      healthCheckScheduler: new HealthCheckScheduler({ clock: this.options.clock }),
      // Refusals and transitions on Node's diagnostics channels: one read of hasSubscribers while nobody listens.
      channels: breakerChannels(),
    };
    this.fleet = fleetOf(this.options.store);
    registry.attach(this);
    // The fleet's reconfigurations are applied here as control(name).reconfigure() applies a patch: over the definition, checked.
    this.fleet?.useReconfigurer({
      apply: (breaker, patch) => this.reconfigure(breaker.name, patch),
      merge: mergeOptions,
    });
    for (const [name, breakerOptions] of Object.entries(this.options.breakers ?? {})) {
      this.configured.add(name);
      this.define(name, breakerOptions, FOR_ROOT, FOR_ROOT, checked.merged.get(name));
    }
    for (const limiter of checked.limiters) this.defineLimiter(limiter);
    // forFeature() definitions and decorators that define a breaker do so before any provider can ask for it
    // by name (forFeature(['name']), injection), whatever the order in which modules are built.
    explorer?.explore(this);
  }

  /** Whether the module was configured to accept only breakers it defines. */
  get strict(): boolean {
    return this.options.strict === true;
  }

  /** @internal From the explorer: the options one `forFeature({ name: options })` gives. */
  addFeature(definition: FeatureDefinition): void {
    for (const [name, breakerOptions] of definition.breakers) {
      this.configured.add(name);
      this.defineFeature(name, breakerOptions, FOR_FEATURE, definition);
    }
    for (const limiter of definition.limiters) this.defineLimiter(limiter);
  }

  /** @internal From the explorer: a limiter a `@ConcurrencyLimit()` or an interceptor binding names. */
  addLimiterUse(use: ConcurrencyLimitUse): void {
    this.limiterUses.push(use);
  }

  /** @internal From the explorer: a `@CircuitBreaker()` method; one that gives options defines its breaker now. */
  addMethod(method: ExploredMethod): void {
    this.methods.push(method);
    if (method.options !== undefined) this.resolve(method.name, method.options, method.site);
  }

  /** @internal From the explorer: an `@InjectCircuitBreaker(name)` of one of the application's classes. */
  addInjection(name: string, site: string): void {
    if (!this.injectionSites.has(name)) this.injectionSites.set(name, site);
  }

  /**
   * Decorators that only name a breaker are checked once every provider,
   * forFeature() definitions included, has been built: the name must exist under
   * `strict`, and a per-key breaker needs a `key` (and only it takes one).
   */
  onModuleInit(): void {
    this.checkLimiterUses();
    for (const method of this.methods) {
      // `@CircuitBreaker()` without a name has a breaker of its own by design; a name given is a reference.
      const breaker = method.named
        ? this.use(method.name, method.site)
        : this.resolve(method.name, undefined, method.site);
      const perKey = breaker.config.perKey !== undefined;
      const keyed = method.key !== undefined;
      if (keyed ? !perKey : perKey && method.familyGate !== true) {
        throw new BreakerConfigError(
          circuitBreakerMessages.keyMismatch(method.name, method.site, perKey),
          method.name,
          perKey ? 'key' : 'perKey',
        );
      }
    }
  }

  /**
   * Checks the limiter of the global bindings of `ConcurrencyLimitInterceptor`
   * that exist only built (`useFactory`, `app.useGlobalInterceptors()`, called
   * before `init()`), then reads the shared state of every shared breaker
   * before the application serves, so that a replica started during an outage
   * starts open: bounded by the store's own deadline, that never fails the
   * start-up.
   */
  async onApplicationBootstrap(): Promise<void> {
    // Global bindings of the limiter interceptor that only exist built: after app.useGlobalInterceptors().
    this.checkLimiterUses(this.explorer?.globalLimiterUses() ?? []);
    this.bootstrapped = true;
    if (this.options.store !== undefined && this.shared.length > 0)
      await this.options.store.hydrate(this.shared);
  }

  async onApplicationShutdown(): Promise<void> {
    this.events.detachAll();
    for (const breaker of this.registry.all()) breaker.dispose();
    this.localDeps.healthCheckScheduler!.stop();
    this.events.complete();
    // Last, and without delaying the rest: the store may still have this replica's last transitions to write.
    await this.options.store?.close();
  }

  /**
   * The breaker for a use at `site` (a decorator, `forFeature`, an operator,
   * `getOrCreate()`): creates it from `options` when allowed, and rejects
   * options given at two sites.
   */
  resolve(
    name: string,
    options: BreakerOptions | undefined,
    site: string,
    source: unknown = site,
  ): Breaker {
    const existing = this.registry.find(name);
    if (existing !== undefined) {
      if (options !== undefined) {
        const defined = this.definitionSites.get(name);
        if (defined === undefined)
          throw new BreakerConfigError(
            circuitBreakerMessages.conflictingOptions(
              name,
              'its first use (built from defaults)',
              site,
            ),
            name,
          );
        // Two sites may read the same (two forFeature() calls): what tells them apart is where the options came from.
        if (defined.source !== source)
          throw new BreakerConfigError(
            circuitBreakerMessages.conflictingOptions(name, defined.site, site),
            name,
          );
      }
      return existing;
    }
    if (this.strict)
      throw new BreakerConfigError(
        circuitBreakerMessages.strictUnknown(
          name,
          site,
          closestName(name, this.definitionSites.keys()),
        ),
        name,
      );
    return this.define(name, options, site, source);
  }

  /**
   * The breaker a decorator, `@InjectCircuitBreaker()` or
   * `forFeature(['name'])` refers to by name. Once breakers are configured, a
   * name nobody defined is most likely a typo: it is reported once, through the
   * Nest logger, with the nearest defined name (an error under `strict`).
   */
  use(name: string, site: string): Breaker {
    if (
      !this.strict &&
      !this.definitionSites.has(name) &&
      this.configured.size > 0 &&
      !this.reported.has(name)
    ) {
      this.reported.add(name);
      const defined = [...this.definitionSites.keys()];
      useLogger.warn(
        circuitBreakerMessages.undefinedName(name, site, closestName(name, defined), defined),
      );
    }
    return this.resolve(name, undefined, site);
  }

  /**
   * What the token of `name` provided by the root module resolves to: a
   * breaker defined centrally, or one this application injects by name
   * (checked like any other use). The tokens of names that only other
   * applications of the process inject resolve to `undefined`: creating their
   * breakers here would be wrong, and under `strict` an error.
   */
  provided(name: string): Breaker | undefined {
    if (this.definitionSites.has(name)) return this.registry.find(name);
    const site = this.injectionSites.get(name);
    return site === undefined ? undefined : this.use(name, site);
  }

  /**
   * A breaker defined by `forFeature({ name: options })`: central
   * configuration like `forRoot({ breakers })`, so allowed under `strict`.
   */
  defineFeature(name: string, options: BreakerOptions, site: string, source: unknown): Breaker {
    if (this.registry.find(name) === undefined) return this.define(name, options, site, source);
    return this.resolve(name, options, site, source);
  }

  /**
   * `registry.control(name).reconfigure()`: `patch` over the breaker's own options, over the
   * module's defaults, checked as start-up checks a definition, then put in
   * force by the breaker (which refuses the whole of it or applies it whole).
   */
  reconfigure(name: string, patch: BreakerOptions): ReconfiguredEvent {
    const breaker = this.registry.find(name)!;
    const site = RECONFIGURE;
    const checked = copyBreakerOptions(
      breakerOptionChecker(name, { subject: circuitBreakerMessages.definitionSubject(name, site) }),
      patch,
    );
    const own = mergeOptions(this.ownOptions.get(name), checked);
    const { merged } = checkBreakerDefinition(name, own, this.options.defaults, site, '');
    const result = breaker.reconfigure(merged);
    this.ownOptions.set(name, own);
    return result;
  }

  /** `registry.reload()`: checked whole (see `planReload`), then applied; nothing changes when it is refused. */
  reload(tree: unknown): CircuitBreakerReload {
    const existing = [...this.registry.all()].map((breaker) => ({
      name: breaker.name,
      config: breaker.config,
      own: this.ownOptions.get(breaker.name),
    }));
    const { defaults, entries } = planReload(tree, existing, this.options.store);
    const inTree = new Set(Object.keys((tree as CircuitBreakerConfigTree).breakers ?? {}));
    this.options = { ...this.options, defaults };
    const result: CircuitBreakerReload = {
      added: [],
      reconfigured: [],
      unchanged: [],
      notInTree: [],
    };
    for (const { name, own, merged, current } of entries) {
      if (inTree.has(name)) {
        this.configured.add(name);
        this.definitionSites.set(name, { site: RELOAD, source: tree });
      } else if (isCentral(this.definitionSites.get(name)?.site)) {
        result.notInTree.push(name);
      }
      if (current === undefined) {
        this.define(name, own, RELOAD, tree, merged);
        result.added.push(name);
        continue;
      }
      this.ownOptions.set(name, own);
      const breaker = this.registry.find(name)!;
      if (sameOptions(current, resolveBreakerOptions(name, merged))) {
        result.unchanged.push(name);
      } else {
        breaker.reconfigure(merged);
        result.reconfigured.push(name);
      }
    }
    return result;
  }

  /** Every limiter a route names exists: a typo fails start-up, with the closest defined name. */
  private checkLimiterUses(uses: readonly ConcurrencyLimitUse[] = this.limiterUses): void {
    for (const { name = DEFAULT_LIMITER, site } of uses) {
      if (this.registry.findLimiter(name) !== undefined) continue;
      const known = this.registry.limiterNames();
      throw new BreakerConfigError(
        concurrencyLimitMessages.unknownLimiter(name, site, closestName(name, known), known),
        name,
      );
    }
  }

  /** Builds a limiter from its checked definition; a name defined twice is an error naming both sites. */
  private defineLimiter({ name, options, site }: LimiterDefinition): void {
    const first = this.limiterSites.get(name);
    if (first !== undefined)
      throw new BreakerConfigError(concurrencyLimitMessages.definedTwice(name, first, site), name);
    this.limiterSites.set(name, site);
    this.registry.addLimiter(new ConcurrencyLimiter(name, options, this.localDeps));
  }

  private define(
    name: string,
    options: BreakerOptions | undefined,
    site: string,
    source: unknown = site,
    /** What checked them already (forRoot's breakers, with the module's options; a reload's): merged over the defaults, resolved. */
    checked?: BreakerOptions,
  ): Breaker {
    // The others are checked here, where they are used. Either way the breaker is built from the very object checked,
    // whose resolution the engine kept: its options are resolved once.
    const merged =
      checked ??
      checkBreakerDefinition(name, options, this.options.defaults, site, sitePath(site, name))
        .merged;
    const store = this.options.store;
    if (store === undefined && merged.share !== undefined && merged.share !== false) {
      throw new BreakerConfigError(circuitBreakerMessages.shareWithoutStore(name), name, 'share');
    }
    const shares = store !== undefined && merged.share !== false;
    const breaker = new Breaker(
      name,
      merged,
      shares
        ? (this.sharedDeps ??= { ...this.localDeps, coordinator: store.coordinator })
        : this.localDeps,
    );
    if (shares) {
      this.shared.push(breaker);
      // Created after start-up (getOrCreate at run time): it catches up with the fleet in the background.
      if (this.bootstrapped) void store.hydrate([breaker]);
    }
    this.registry.add(name, breaker);
    this.ownOptions.set(name, options);
    if (options !== undefined) this.definitionSites.set(name, { site, source });
    this.events.track(breaker);
    return breaker;
  }
}

/** Sites where the application defines breakers centrally: a reload that leaves one of these out reports it. */
function isCentral(site: string | undefined): boolean {
  return site === FOR_ROOT || site === RELOAD;
}

/** The site named in the messages of a run-time reconfiguration. */
const RECONFIGURE = 'CircuitBreakerRegistry.control().reconfigure()';

const useLogger = new Logger('CircuitBreakerModule');
