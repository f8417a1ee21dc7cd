import { Injectable, Logger, Optional } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type {
  Breaker,
  BreakerOptions,
  BreakerSnapshot,
  ConcurrencyLimiter,
  FaultInjectionOptions,
  InjectedFault,
  ReconfiguredEvent,
} from './core/index.js';
import { controlOf } from './circuit-breaker.control.js';
import type {
  CircuitBreakerControl,
  CircuitBreakerFleetControl,
} from './interfaces/circuit-breaker-control.interface.js';
import type { FleetControl, FleetScope } from './interfaces/fleet-control.interface.js';
import type { CircuitBreakerConfigTree, CircuitBreakerReload } from './circuit-breaker.reload.js';
import { CircuitBreakerEvents } from './circuit-breaker.events.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import type { CircuitBreakerEvent } from './interfaces/circuit-breaker-event.interface.js';
import type { CircuitBreakerModuleOptions } from './interfaces/circuit-breaker-module-options.interface.js';

/**
 * What the registry asks of the orchestrator that builds its breakers
 * (`CircuitBreakerOrchestrator`, which attaches itself): the operations that
 * define or redefine a breaker, which the lookup only forwards.
 *
 * @internal
 */
export interface RegistryOrchestrator {
  readonly strict: boolean;
  readonly fleet: FleetControl | undefined;
  readonly clock: CircuitBreakerModuleOptions['clock'];
  readonly store: CircuitBreakerModuleOptions['store'];
  resolve(name: string, options: BreakerOptions | undefined, site: string): Breaker;
  use(name: string, site: string): Breaker;
  reconfigure(name: string, patch: BreakerOptions): ReconfiguredEvent;
  reload(tree: unknown): CircuitBreakerReload;
}

const GET_OR_CREATE = 'CircuitBreakerRegistry.getOrCreate()';
const gameDayLogger = new Logger('CircuitBreaker');

/**
 * Every breaker of one application, by name. One registry per application
 * (never process-wide state): two applications or testing modules in one
 * process never share a breaker.
 *
 * The registry is the lookup, as `SchedulerRegistry` is for @nestjs/schedule:
 * building the breakers, checking their definitions and running their life
 * (the lifecycle hooks) is `CircuitBreakerOrchestrator`'s, which injects the
 * registry and fills it; their events are `CircuitBreakerEvents`'.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerRegistry {
  /**
   * Every event of every breaker, tagged with the breaker's name: the
   * application's `CircuitBreakerEvents.events$`. Breakers are only listened to
   * while someone subscribes, so an unobserved application pays nothing for it.
   */
  readonly events$: Observable<CircuitBreakerEvent>;

  /** @internal The application's events (injectable as `CircuitBreakerEvents`), for services built by hand with a registry. */
  readonly events: CircuitBreakerEvents;

  private readonly breakers = new Map<string, Breaker>();
  private readonly limiters = new Map<string, ConcurrencyLimiter>();
  private attached: RegistryOrchestrator | undefined;

  /** @internal Nest builds the registry: its parameters are not public. */
  constructor(@Optional() events: CircuitBreakerEvents = new CircuitBreakerEvents()) {
    this.events = events;
    this.events$ = events.events$;
  }

  /** @internal What builds this application's breakers; it attaches itself when Nest builds it. */
  get orchestrator(): RegistryOrchestrator {
    if (this.attached === undefined) throw new Error(circuitBreakerMessages.registryAlone());
    return this.attached;
  }

  /** @internal Called once, by the orchestrator Nest builds for this registry. */
  attach(orchestrator: RegistryOrchestrator): void {
    this.attached = orchestrator;
  }

  /** @internal The orchestrator's: a breaker it has just built. */
  add(name: string, breaker: Breaker): void {
    this.breakers.set(name, breaker);
  }

  /** @internal The breaker named `name`, or `undefined`. */
  find(name: string): Breaker | undefined {
    return this.breakers.get(name);
  }

  /** @internal Every breaker, in creation order. */
  all(): IterableIterator<Breaker> {
    return this.breakers.values();
  }

  /** Whether the module was configured to accept only breakers it defines. */
  get strict(): boolean {
    return this.orchestrator.strict;
  }

  /** The breaker named `name`; throws, naming the known breakers, when there is none. */
  get(name: string): Breaker {
    const breaker = this.breakers.get(name);
    if (breaker === undefined)
      throw new Error(circuitBreakerMessages.unknownBreaker(name, [...this.breakers.keys()]));
    return breaker;
  }

  /**
   * The breaker named `name`, built from `defaults` and `options` if it does not
   * exist yet (not under `strict`). Options for a name that was configured
   * elsewhere are an error: one breaker, one site for its options.
   */
  getOrCreate(name: string, options?: BreakerOptions): Breaker {
    // Checked before the name is used in a message or a Map: a Symbol would throw from a template literal.
    if (typeof name !== 'string' || name === '')
      throw new TypeError(circuitBreakerMessages.badBreakerName(GET_OR_CREATE, name));
    return this.orchestrator.resolve(name, options, GET_OR_CREATE);
  }

  /**
   * Manual control of the breaker named `name`, every method a promise:
   * `force(mode, options)`, `release()` and `reconfigure(patch)`. Every
   * mistake (an unknown name, an invalid option, a bad scope) is a rejection,
   * never a throw.
   *
   * Without a scope: this replica only. `reconfigure(patch)` puts `patch` in
   * force over the options the breaker was defined with (over the module's
   * defaults), checked exactly as start-up checks them, applied at once or not
   * at all. The breaker keeps its state, counters and listeners, and its
   * window when the window keeps its shape; the result (and the
   * `reconfigured` event, which the logs show) says what had to start
   * afresh. A per-key family applies it to every child. `perKey` and `share`
   * cannot change.
   *
   * With `{ fleet: true }` (and a store that carries orders, such as
   * `RedisBreakerStore`): each order is obeyed here at once (checked as the
   * local one is: refused, nothing is sent), then stored and signalled, so
   * that every replica obeys (and one that starts later too): a force until
   * `release()` or `untilMs` (a wall-clock time: it ends everywhere then,
   * each replica by itself); a reconfiguration, which must be plain data,
   * checked by each replica as its own start-up would (one that cannot apply
   * it keeps its options and says why in its log). The promise resolves once
   * the store took the order, and rejects with a `FleetOrderError` naming the
   * breaker when it cannot (this replica still obeys; the others were not told).
   */
  control(name: string): CircuitBreakerControl;
  control(name: string, scope: FleetScope): CircuitBreakerFleetControl;
  control(
    name: string,
    scope?: { fleet: boolean },
  ): CircuitBreakerControl | CircuitBreakerFleetControl;
  control(
    name: string,
    scope?: { fleet: boolean },
  ): CircuitBreakerControl | CircuitBreakerFleetControl {
    return controlOf(this, name, scope);
  }

  /**
   * Applies a whole new `{ defaults, breakers }` tree (what `forRoot()` was
   * given, read again): creates the breakers it adds, reconfigures those whose
   * effective options change (state kept, see `reconfigure()`), and reports
   * the breakers it no longer names, which keep running. Checked whole first:
   * one invalid breaker refuses the reload, with every error listed, and
   * nothing changes.
   */
  reload(tree: CircuitBreakerConfigTree): CircuitBreakerReload {
    return this.orchestrator.reload(tree);
  }

  /**
   * Makes the calls of `name` see a fault instead of the dependency's answer
   * (`{ fail?, latencyMs?, overload?: { retryAfterMs }, rate?, random? }`),
   * whether they come from a decorated method, the `circuitBreaker()`
   * operator or `execute()`, until `remove()` on the result: a game day
   * watches fallbacks, 503s and readiness without breaking the dependency.
   * Refused unless the module was configured with `faultInjection: true`.
   */
  injectFault(name: string, fault: FaultInjectionOptions): InjectedFault {
    const injected = this.get(name).injectFault(fault);
    // A game day must show in the logs: whoever reads them during it knows the failures are made up.
    gameDayLogger.warn(circuitBreakerMessages.faultInjected(name, fault));
    return {
      get injected() {
        return injected.injected;
      },
      get active() {
        return injected.active;
      },
      remove() {
        if (!injected.active) return;
        injected.remove();
        gameDayLogger.warn(circuitBreakerMessages.faultRemoved(name, injected.injected));
      },
    };
  }

  has(name: string): boolean {
    return this.breakers.has(name);
  }

  /** Names of every breaker, in creation order. */
  list(): string[] {
    return [...this.breakers.keys()];
  }

  /** @internal The orchestrator's: a limiter it has just built. */
  addLimiter(limiter: ConcurrencyLimiter): void {
    this.limiters.set(limiter.name, limiter);
  }

  /** The concurrency limiter named `name`. */
  limiter(name: string): ConcurrencyLimiter {
    const limiter = this.limiters.get(name);
    if (limiter === undefined) throw new Error(`No concurrency limiter "${name}".`);
    return limiter;
  }

  /** Names of every concurrency limiter, in creation order. */
  limiterNames(): string[] {
    return [...this.limiters.keys()];
  }

  /** A snapshot of every breaker, in creation order. */
  snapshot(): BreakerSnapshot[] {
    return [...this.breakers.values()].map((breaker) => breaker.snapshot());
  }
}
