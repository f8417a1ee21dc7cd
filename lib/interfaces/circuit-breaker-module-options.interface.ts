import type { BreakerOptions, BreakerStore, Clock } from '../core/index.js';
import type {
  CircuitBreakerEventSink,
  CircuitBreakerLoggingOptions,
} from './circuit-breaker-logging-options.interface.js';

/**
 * Options of `CircuitBreakerModule.forRoot()`.
 *
 * @publicApi
 */
export interface CircuitBreakerModuleOptions {
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
}

/**
 * What a `useClass` / `useExisting` provider of `forRootAsync()` implements.
 *
 * @publicApi
 */
export interface CircuitBreakerOptionsFactory {
  createCircuitBreakerOptions(): CircuitBreakerModuleOptions | Promise<CircuitBreakerModuleOptions>;
}
