import type {
  InjectionToken,
  ModuleMetadata,
  OptionalFactoryDependency,
  Provider,
  Type,
} from '@nestjs/common';
import type {
  BreakerOptions,
  BreakerStore,
  Clock,
  ConcurrencyLimitOptions,
} from '../core/index.js';
import type { CircuitBreakerHttpOptions } from './circuit-breaker-http-options.interface.js';
import type {
  CircuitBreakerEventSink,
  CircuitBreakerLoggingOptions,
} from './circuit-breaker-logging-options.interface.js';
import type { CriticalityOptions } from './concurrency-limit-options.interface.js';

/**
 * Options of `CircuitBreakerModule.forRoot()`.
 *
 * @publicApi
 */
export interface CircuitBreakerModuleOptions extends CriticalityOptions {
  /**
   * Named concurrency limiters of this service's own work, built and validated
   * at start-up: `ConcurrencyLimitInterceptor` and `@ConcurrencyLimit(name)`
   * use them, `registry.limiter(name)` returns one. A route that names no
   * limiter uses the one named `'default'`.
   */
  limiters?: Record<string, ConcurrencyLimitOptions>;
  /** Options every breaker starts from; a breaker's own options override them key by key (`halfOpen`, `backoff` merged too). */
  defaults?: BreakerOptions;
  /** Named breakers, built and validated at start-up. */
  breakers?: Record<string, BreakerOptions>;
  /**
   * Only the breakers named in `breakers` may be used: a decorator, `forFeature`
   * or `getOrCreate` naming another one fails. Default `false`: unknown names are
   * built from `defaults`.
   */
  strict?: boolean;
  /** The time source of every breaker (wall time for timestamps, `monotonic()` for durations; see `Clock`). Inject a manual clock in tests. */
  clock?: Clock;
  /** Transition logs; `false` turns them off. Default `{ level: 'log', maxPerSecond: 10 }`. */
  logging?: false | CircuitBreakerLoggingOptions;
  /**
   * Publishes `circuit-breaker.opened`, `.half-opened`, `.closed`, `.isolated`
   * and `.rejected` to it, e.g. `EventEmitter2` from `@nestjs/event-emitter`.
   */
  eventEmitter?: CircuitBreakerEventSink;
  /**
   * Shares breaker state between the replicas of the application, e.g.
   * `new RedisBreakerStore({ redis })` from `nestjs-circuit-breaker/redis`.
   * Every breaker shares unless its options say `share: false`; the shared
   * state is read before the application serves. Default: none, every
   * replica decides alone.
   */
  store?: BreakerStore;
  /**
   * Allows `registry.injectFault()` (failures, latency and overload made up
   * by the breakers, for a game day). Default `false`: injection is refused,
   * so that it never happens by mistake in production.
   * `CircuitBreakerTestingModule` turns it on.
   */
  faultInjection?: boolean;
  /**
   * Register the module globally. Default `true`. `forRoot()` takes it here;
   * `forRootAsync()` beside `useFactory`, not in what the factory returns.
   */
  isGlobal?: boolean;
  /**
   * Register `CircuitBreakerExceptionFilter` globally (503 + `Retry-After`, 504),
   * with bodies that name no breaker; `{ details: true }` adds the breaker's
   * name and reason, `{ body }` builds the body. Default `false`. A catch-all
   * filter registered with `app.useGlobalFilters()` takes precedence over it:
   * delegate to the filter from there (see `CircuitBreakerExceptionFilter`).
   * As `isGlobal`, `forRootAsync()` takes it beside `useFactory`.
   */
  httpFilter?: boolean | CircuitBreakerHttpOptions;
}

/**
 * Options of `CircuitBreakerModule.forRootAsync()`: the module options from a
 * factory (`useFactory` with `inject`, or a `useClass` / `useExisting`
 * provider), which returns them without `isGlobal` and `httpFilter`: those
 * shape the module itself, so they are given here.
 *
 * @publicApi
 */
export interface CircuitBreakerModuleAsyncOptions
  extends
    Pick<ModuleMetadata, 'imports'>,
    Pick<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'> {
  useFactory?: (
    ...args: any[]
  ) =>
    | Omit<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'>
    | Promise<Omit<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'>>;
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  useClass?: Type<CircuitBreakerOptionsFactory>;
  useExisting?: Type<CircuitBreakerOptionsFactory>;
  /** Where `useClass`'s own dependencies come from, when they are not in `imports`. */
  provideInjectionTokensFrom?: Provider[];
}

/**
 * What a `useClass` / `useExisting` provider of `forRootAsync()` implements.
 *
 * @publicApi
 */
export interface CircuitBreakerOptionsFactory {
  createCircuitBreakerOptions():
    | Omit<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'>
    | Promise<Omit<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'>>;
}
