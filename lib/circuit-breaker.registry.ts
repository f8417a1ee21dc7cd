import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Observable, Subject } from 'rxjs';
import { Breaker, BreakerConfigError, type BreakerDeps, BREAKER_EVENT_NAMES, type BreakerEventName, type BreakerOptions, type BreakerSnapshot, type BreakerStore } from './core/index.js';
import { OptionChecker, pathKey } from './core/option-checker.js';
import { breakerOptionChecker, copyBreakerOptions, resolveBreakerOptions } from './core/resolve-options.js';
import { CircuitBreakerExplorer } from './circuit-breaker.explorer.js';
import { CIRCUIT_BREAKER_MODULE_OPTIONS } from './circuit-breaker.module-definition.js';
import type { DecoratedMethod } from './decorated-method.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import { closestName } from './closest-name.js';
import { breakerMessages } from './core/breaker.messages.js';
import type { CircuitBreakerEvent } from './interfaces/circuit-breaker-event.interface.js';
import type { CircuitBreakerModuleOptions } from './interfaces/circuit-breaker-module-options.interface.js';

const FOR_ROOT = 'CircuitBreakerModule.forRoot({ breakers })';
const MODULE = 'CircuitBreakerModule';
const CALL_EVENTS = new Set<BreakerEventName>(['success', 'failure', 'ignored', 'timeout', 'slowCall']);
const GET_OR_CREATE = 'CircuitBreakerRegistry.getOrCreate()';
const FOR_FEATURE = 'CircuitBreakerModule.forFeature()';

/**
 * Every breaker of one application, by name. One registry per application
 * (never process-wide state): two applications or testing modules in one
 * process never share a breaker.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerRegistry implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  /**
   * Every event of every breaker, tagged with the breaker's name. Breakers are
   * only listened to while someone subscribes, so an unobserved application pays
   * nothing for it.
   */
  readonly events$: Observable<CircuitBreakerEvent>;

  private readonly breakers = new Map<string, Breaker>();
  /** Where each breaker's options were set, for conflict messages. */
  private readonly origins = new Map<string, { place: string; source: unknown }>();
  private readonly events = new Subject<CircuitBreakerEvent>();
  private readonly observers = new Set<Observer>();
  private stopEvents: (() => void) | undefined;
  private subscribers = 0;
  /** Breakers that share their state through the store; hydrated at bootstrap, or when created after it. */
  private readonly shared: Breaker[] = [];
  /** One deps object for every breaker (one for those shared through the store): their environment is checked and held once. */
  private readonly localDeps: BreakerDeps;
  private sharedDeps: BreakerDeps | undefined;
  private bootstrapped = false;
  /** The application's @CircuitBreaker() methods, found at construction. */
  private readonly methods: DecoratedMethod[];

  /** Names configured centrally (forRoot `breakers`, forFeature definitions): with any, an undefined name is likely a typo. */
  private readonly configured = new Set<string>();
  /** The breaker names this application's classes inject with `@InjectCircuitBreaker()`, with the first place of each. */
  private readonly injections: Map<string, string>;
  /** Undefined names already reported, so that each is reported once. */
  private readonly reported = new Set<string>();

  /** The module's options as checked: a plain copy, so that what was validated is what is used. */
  private readonly options: CircuitBreakerModuleOptions;

  /** @internal Nest builds the registry: its parameters are not public. */
  constructor(
    @Inject(CIRCUIT_BREAKER_MODULE_OPTIONS) options: CircuitBreakerModuleOptions,
    @Optional() explorer?: CircuitBreakerExplorer,
  ) {
    // Before anything else: two roots would build two registries, and the last would silently win.
    const roots = explorer?.rootRegistrations() ?? [];
    if (roots.length > 1) throw new Error(circuitBreakerMessages.duplicateRoot(roots));
    this.options = validateModuleOptions(options);
    this.localDeps = { clock: this.options.clock, reportError };
    this.events$ = new Observable<CircuitBreakerEvent>((subscriber) => {
      const subscription = this.events.subscribe(subscriber);
      if (this.subscribers++ === 0) this.stopEvents = this.observe(BREAKER_EVENT_NAMES, (event) => this.events.next(event));
      return () => {
        subscription.unsubscribe();
        if (--this.subscribers === 0) {
          this.stopEvents?.();
          this.stopEvents = undefined;
        }
      };
    });
    for (const [name, breakerOptions] of Object.entries(this.options.breakers ?? {})) {
      this.configured.add(name);
      this.define(name, breakerOptions, FOR_ROOT, FOR_ROOT, true);
    }
    // forFeature() definitions and decorators that define a breaker do so before any provider can ask for it
    // by name (forFeature(['name']), injection), whatever the order in which modules are built.
    for (const definition of explorer?.featureDefinitions() ?? []) {
      for (const [name, breakerOptions] of definition.breakers) {
        this.configured.add(name);
        this.defineFeature(name, breakerOptions, FOR_FEATURE, definition);
      }
    }
    this.methods = explorer?.decoratedMethods() ?? [];
    this.injections = explorer?.injectedBreakers() ?? new Map<string, string>();
    for (const method of this.methods) if (method.options !== undefined) this.resolve(method.name, method.options, method.origin);
  }

  /**
   * Decorators that only name a breaker are checked once every provider,
   * forFeature() definitions included, has been built: the name must exist under
   * `strict`, and a per-key breaker needs a `key` (and only it takes one).
   */
  onModuleInit(): void {
    for (const method of this.methods) {
      // `@CircuitBreaker()` without a name has a breaker of its own by design; a name given is a reference.
      const breaker = method.named ? this.use(method.name, method.origin) : this.resolve(method.name, undefined, method.origin);
      const perKey = breaker.config.perKey !== undefined;
      if (perKey !== (method.key !== undefined)) {
        throw new BreakerConfigError(circuitBreakerMessages.keyMismatch(method.name, method.origin, perKey), method.name, perKey ? 'key' : 'perKey');
      }
    }
  }

  /** Whether the module was configured to accept only breakers it defines. */
  get strict(): boolean {
    return this.options.strict === true;
  }

  /** The breaker named `name`; throws, naming the known breakers, when there is none. */
  get(name: string): Breaker {
    const breaker = this.breakers.get(name);
    if (breaker === undefined) throw new Error(circuitBreakerMessages.unknownBreaker(name, [...this.breakers.keys()]));
    return breaker;
  }

  /**
   * The breaker named `name`, built from `defaults` and `options` if it does not
   * exist yet (not under `strict`). Options for a name that was configured
   * elsewhere are an error: one breaker, one place for its options.
   */
  getOrCreate(name: string, options?: BreakerOptions): Breaker {
    // Checked before the name is used in a message or a Map: a Symbol would throw from a template literal.
    if (typeof name !== 'string' || name === '') throw new TypeError(`${GET_OR_CREATE}: ${breakerMessages.badName(name)}`);
    return this.resolve(name, options, GET_OR_CREATE);
  }

  has(name: string): boolean {
    return this.breakers.has(name);
  }

  /** Names of every breaker, in creation order. */
  list(): string[] {
    return [...this.breakers.keys()];
  }

  /** A snapshot of every breaker, in creation order. */
  snapshot(): BreakerSnapshot[] {
    return [...this.breakers.values()].map((breaker) => breaker.snapshot());
  }

  /**
   * @internal Calls `sink` with every event of the given types from every
   * breaker, per-key children and breakers created later included, until the
   * returned function is called. Only the named types are listened to, so
   * watching transitions costs a healthy call nothing. `evicted` is told of
   * each per-key child its family evicts, after which that child's events no
   * longer reach `sink` (a call still in flight on it settles unreported), so
   * what `sink` keeps per key can be dropped for good.
   */
  observe(types: readonly BreakerEventName[], sink: (event: CircuitBreakerEvent) => void, evicted?: (name: string, key: string) => void): () => void {
    const observer: Observer = { types, sink, evicted, offs: [], childOffs: new WeakMap() };
    this.observers.add(observer);
    for (const breaker of this.breakers.values()) this.attach(observer, breaker);
    return () => {
      if (!this.observers.delete(observer)) return;
      for (const off of observer.offs) off();
      for (const breaker of this.breakers.values()) {
        for (const child of breaker.children()) observer.childOffs.get(child)?.forEach((off) => off());
      }
    };
  }

  /**
   * Reads the shared state of every shared breaker before the application
   * serves, so that a replica started during an outage starts open. Bounded by
   * the store's own deadline; never fails the start-up.
   */
  async onApplicationBootstrap(): Promise<void> {
    this.bootstrapped = true;
    if (this.options.store !== undefined && this.shared.length > 0) await this.options.store.hydrate(this.shared);
  }

  async onApplicationShutdown(): Promise<void> {
    this.observers.clear();
    for (const breaker of this.breakers.values()) breaker.dispose();
    this.events.complete();
    // Last, and without delaying the rest: the store may still have this replica's last transitions to write.
    await this.options.store?.close();
  }

  /**
   * @internal The breaker for a use at `place` (a decorator, `forFeature`, an
   * operator): creates it from `options` when allowed, and rejects options set
   * in two places.
   */
  resolve(name: string, options: BreakerOptions | undefined, place: string, source: unknown = place): Breaker {
    const existing = this.breakers.get(name);
    if (existing !== undefined) {
      if (options !== undefined) {
        const origin = this.origins.get(name);
        if (origin === undefined) throw new BreakerConfigError(circuitBreakerMessages.conflictingOptions(name, 'its first use (built from defaults)', place), name);
        // Two places may read the same (two forFeature() calls): what tells them apart is where the options came from.
        if (origin.source !== source) throw new BreakerConfigError(circuitBreakerMessages.conflictingOptions(name, origin.place, place), name);
      }
      return existing;
    }
    if (this.strict) throw new BreakerConfigError(circuitBreakerMessages.strictUnknown(name, place, closestName(name, this.origins.keys())), name);
    return this.define(name, options, place, source);
  }

  /**
   * @internal The breaker a decorator, `@InjectCircuitBreaker()` or
   * `forFeature(['name'])` refers to by name. Once breakers are configured, a
   * name nobody defined is most likely a typo: it is reported once, through the
   * Nest logger, with the nearest defined name (an error under `strict`).
   */
  use(name: string, place: string): Breaker {
    if (!this.strict && !this.origins.has(name) && this.configured.size > 0 && !this.reported.has(name)) {
      this.reported.add(name);
      const defined = [...this.origins.keys()];
      useLogger.warn(circuitBreakerMessages.undefinedName(name, place, closestName(name, defined), defined));
    }
    return this.resolve(name, undefined, place);
  }

  /**
   * @internal What the token of `name` provided by the root module resolves
   * to: a breaker defined centrally, or one this application injects by name
   * (checked like any other use). The tokens of names that only other
   * applications of the process inject resolve to `undefined`: creating their
   * breakers here would be wrong, and under `strict` an error.
   */
  provided(name: string): Breaker | undefined {
    if (this.origins.has(name)) return this.breakers.get(name);
    const place = this.injections.get(name);
    return place === undefined ? undefined : this.use(name, place);
  }

  /**
   * @internal A breaker defined by `forFeature({ name: options })`: central
   * configuration like `forRoot({ breakers })`, so allowed under `strict`.
   */
  defineFeature(name: string, options: BreakerOptions, place: string, source: unknown): Breaker {
    if (!this.breakers.has(name)) return this.define(name, options, place, source);
    return this.resolve(name, options, place, source);
  }

  private define(name: string, options: BreakerOptions | undefined, place: string, source: unknown = place, checked = false): Breaker {
    // forRoot's breakers were checked with the module's options; the others are checked here, where they are used.
    const merged = checked ? mergeOptions(this.options.defaults, options) : checkBreakerDefinition(name, options, this.options.defaults, place, placePath(place, name)).merged;
    const store = this.options.store;
    if (store === undefined && merged.share !== undefined && merged.share !== false) {
      throw new BreakerConfigError(circuitBreakerMessages.shareWithoutStore(name), name, 'share');
    }
    const shares = store !== undefined && merged.share !== false;
    const breaker = new Breaker(name, merged, shares ? (this.sharedDeps ??= { ...this.localDeps, coordinator: store.coordinator }) : this.localDeps);
    if (shares) {
      this.shared.push(breaker);
      // Created after start-up (getOrCreate at run time): it catches up with the fleet in the background.
      if (this.bootstrapped) void store.hydrate([breaker]);
    }
    this.breakers.set(name, breaker);
    if (options !== undefined) this.origins.set(name, { place, source });
    for (const observer of this.observers) this.attach(observer, breaker);
    return breaker;
  }

  private attach(observer: Observer, breaker: Breaker): void {
    observer.offs.push(...this.listen(observer, breaker, breaker.name, undefined));
    if (breaker.config.perKey === undefined) return;
    // Children's listeners live in a weak map: an evicted child takes them with it.
    const attachChild = (child: Breaker) => observer.childOffs.set(child, this.listen(observer, child, breaker.name, child.key));
    for (const child of breaker.children()) attachChild(child);
    observer.offs.push(breaker.onChild(attachChild));
    observer.offs.push(
      breaker.onEvict((child) => {
        observer.childOffs.get(child)?.forEach((off) => off());
        observer.childOffs.delete(child);
        observer.evicted?.(breaker.name, child.key!);
      }),
    );
  }

  private listen(observer: Observer, breaker: Breaker, name: string, key: string | undefined): (() => void)[] {
    const { sink } = observer;
    // A family's own call events only mirror its children's (a family probe is a child's call): reporting
    // both would count one call twice. The family reports its transitions, rejections and probes.
    const family = key === undefined && breaker.config.perKey !== undefined;
    const types = family ? observer.types.filter((type) => !CALL_EVENTS.has(type)) : observer.types;
    return types.map((type) =>
      breaker.on(type, (payload) => sink((key === undefined ? { breaker: name, type, payload } : { breaker: name, key, type, payload }) as CircuitBreakerEvent)),
    );
  }
}

interface Observer {
  readonly types: readonly BreakerEventName[];
  readonly sink: (event: CircuitBreakerEvent) => void;
  readonly evicted: ((name: string, key: string) => void) | undefined;
  readonly offs: (() => void)[];
  readonly childOffs: WeakMap<Breaker, (() => void)[]>;
}

/**
 * A breaker's options over the defaults: key by key, with the nested
 * `halfOpen`, `backoff` and `overload` objects merged too (`overload: false`
 * wins). A key given as `undefined` means "not given": it never drops a default.
 *
 * @internal
 */
export function mergeOptions(defaults: BreakerOptions | undefined, options: BreakerOptions | undefined): BreakerOptions {
  if (defaults === undefined) return options ?? {};
  if (options === undefined) return defaults;
  const merged: Record<string, unknown> = assignDefined({ ...defaults }, options);
  // Nested objects merge only when both sides are objects: anything else is kept as given, for validation to reject.
  for (const key of ['halfOpen', 'backoff', 'overload'] as const) {
    const base = defaults[key];
    const own = options[key];
    if (isObject(base) && isObject(own)) merged[key] = assignDefined({ ...base }, own);
  }
  // `share: true` means "share, as the defaults say how".
  if (isObject(defaults.share) && (options.share === true || isObject(options.share))) {
    merged.share = assignDefined({ ...defaults.share }, options.share === true ? {} : options.share);
  }
  return merged as BreakerOptions;
}

function assignDefined(target: Record<string, unknown>, source: object): Record<string, unknown> {
  for (const [key, value] of Object.entries(source)) if (value !== undefined) target[key] = value;
  return target;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The nested options merged key by key with the defaults' (see mergeOptions). */
const MERGED_KEYS = ['halfOpen', 'backoff', 'overload', 'share'];

/** Where the options given at `place` are written: the path prefix of their options in messages. */
function placePath(place: string, name: string): string {
  if (place === FOR_ROOT) return `breakers${pathKey(name)}`;
  // forFeature({ name: options }): the argument is a record of name → options.
  if (place.startsWith('CircuitBreakerModule.forFeature()')) return pathKey(name).replace(/^\./, '');
  return '';
}

/** Whether the plain options `options` set `option` (`halfOpen.maxProbes`). */
function sets(options: BreakerOptions | undefined, option: string): boolean {
  let value: unknown = options;
  for (const key of option.split('.')) value = isObject(value) ? value[key] : undefined;
  return value !== undefined;
}

/**
 * Checks the options one place gives a breaker, over the module's (already
 * checked) defaults, and returns them merged, as plain data. Errors name the
 * breaker, the place, and the option where the user wrote it: under `prefix`
 * (`breakers.payments`) when the breaker's own options set it, under
 * `defaults` when only the defaults do.
 *
 * @internal
 */
export function checkBreakerDefinition(
  name: string,
  options: unknown,
  defaults: BreakerOptions | undefined,
  place: string,
  prefix: string,
): { own: BreakerOptions | undefined; merged: BreakerOptions } {
  const subject = `Circuit breaker "${name}" in ${place === FOR_ROOT ? MODULE : place}`;
  const own = (option: string) => (option === 'options' ? prefix || 'options' : prefix === '' ? option : `${prefix}.${option}`);
  const copy = options === undefined ? undefined : copyBreakerOptions(breakerOptionChecker(name, { subject, pathOf: own }), options);
  const merged = mergeOptions(defaults, copy);
  // A default is to blame only when the breaker's own options leave it in place: an own `aggregate` replaces the default one whole.
  const ownSets = (option: string) => sets(copy, option) || (!MERGED_KEYS.includes(option.split('.')[0]!) && sets(copy, option.split('.')[0]!));
  const pathOf = (option: string) => (option !== 'options' && !ownSets(option) && sets(defaults, option) ? `defaults.${option}` : own(option));
  resolveBreakerOptions(name, merged, { subject, pathOf });
  return { own: copy, merged };
}

/** The options of forRoot() / forRootAsync() besides the module extras. @internal */
export const MODULE_KEYS = ['defaults', 'breakers', 'strict', 'clock', 'logging', 'eventEmitter', 'store'] as const;
const LOG_LEVELS = ['verbose', 'debug', 'log', 'warn'] as const;

/**
 * Checks the options of `CircuitBreakerModule.forRoot()` / `forRootAsync()`,
 * the breakers they define included, and returns them as a plain copy: what
 * the registry works with afterwards. Every error names the module or the
 * breaker, and the option's path (`breakers.payments.halfOpen.maxProbes`).
 *
 * @internal
 */
export function validateModuleOptions(given: unknown): CircuitBreakerModuleOptions {
  const check = new OptionChecker(MODULE);
  const options = check.record('', given, MODULE_KEYS, 'an object', false) as Record<(typeof MODULE_KEYS)[number], unknown>;
  if (options.strict !== undefined) check.boolean('strict', options.strict);
  if (options.clock !== undefined) check.service('clock', options.clock, ['now'], 'an object with a now() method');
  const logging = options.logging === undefined || options.logging === false ? options.logging : check.record('logging', options.logging, ['level', 'maxPerSecond'], 'false or { level?, maxPerSecond? }');
  if (isObject(logging)) {
    if (logging.level !== undefined) check.oneOf('logging.level', logging.level, LOG_LEVELS);
    if (logging.maxPerSecond !== undefined) check.number('logging.maxPerSecond', logging.maxPerSecond, { min: 1, integer: true }, 'an integer >= 1');
  }
  if (options.eventEmitter !== undefined) {
    check.service('eventEmitter', options.eventEmitter, ['emit'], 'an object with an emit(event, payload) method, such as EventEmitter2');
  }
  const storeExpected = 'a BreakerStore such as new RedisBreakerStore({ redis }) from nestjs-circuit-breaker/redis';
  const store = options.store === undefined ? undefined : check.service<BreakerStore>('store', options.store, ['hydrate', 'close'], storeExpected);
  if (store !== undefined) check.service('store', check.read(store, 'coordinator', 'store.coordinator'), ['mayProbe'], storeExpected);

  // The defaults alone must make a valid breaker, so that a bad default fails at start-up, not at first use.
  let defaults: BreakerOptions | undefined;
  if (options.defaults !== undefined) {
    const source = { subject: MODULE, pathOf: (option: string) => (option === 'options' ? 'defaults' : `defaults.${option}`) };
    defaults = copyBreakerOptions(breakerOptionChecker('(defaults)', source), options.defaults);
    resolveBreakerOptions('(defaults)', defaults, source);
    if (store === undefined && defaults.share !== undefined && defaults.share !== false) {
      throw new BreakerConfigError(circuitBreakerMessages.shareWithoutStore('(defaults)'), '(defaults)', 'share');
    }
  }
  let breakers: Record<string, BreakerOptions> | undefined;
  if (options.breakers !== undefined) {
    breakers = {};
    for (const [name, breakerOptions] of check.entries('breakers', options.breakers, 'a record of breaker name → options')) {
      if (name === '') check.fail('breakers', 'option "breakers" names a breaker "": give every breaker a non-empty name.');
      // The breaker's own options are kept (merged again with the defaults when it is built), checked over the defaults here.
      const { own, merged } = checkBreakerDefinition(name, breakerOptions, defaults, FOR_ROOT, `breakers${pathKey(name)}`);
      if (store === undefined && merged.share !== undefined && merged.share !== false) {
        throw new BreakerConfigError(circuitBreakerMessages.shareWithoutStore(name), name, 'share');
      }
      breakers[name] = own ?? {};
    }
  }
  return { ...(options as CircuitBreakerModuleOptions), defaults, breakers };
}

const faultLogger = new Logger('CircuitBreaker');
const useLogger = new Logger('CircuitBreakerModule');

/** The application's listener or classifier faults, in the application's log (the error names the breaker and the fix). */
function reportError(error: Error): void {
  let stack: string | undefined;
  try {
    stack = error.cause instanceof Error ? error.cause.stack : undefined;
  } catch {
    // What was thrown cannot be read: the message already says so.
  }
  faultLogger.error(error.message, stack);
}
