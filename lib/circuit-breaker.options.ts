import { BreakerConfigError, type BreakerOptions, type BreakerStore } from './core/index.js';
import { resolveForBreaker } from './core/options/config-cache.js';
import { OptionChecker, pathKey } from './core/options/option-checker.js';
import {
  breakerOptionChecker,
  copyBreakerOptions,
  resolveBreakerOptions,
} from './core/options/resolve-options.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import {
  checkCriticalityOptions,
  checkLimiterDefinitions,
  type LimiterDefinition,
} from './concurrency-limit.options.js';
import type { CircuitBreakerModuleOptions } from './interfaces/circuit-breaker-module-options.interface.js';

// The options of the module and of each breaker definition: checked once, merged over the defaults, kept as plain data.

/** Where `forRoot({ breakers })` defines breakers, as messages name it. @internal */
export const FOR_ROOT = 'CircuitBreakerModule.forRoot({ breakers })';
/** Where `forFeature({ name: options })` defines breakers, as messages name it. @internal */
export const FOR_FEATURE = 'CircuitBreakerModule.forFeature()';
const MODULE = 'CircuitBreakerModule';

/**
 * A breaker's options over the defaults: key by key, with the nested
 * `halfOpen`, `backoff` and `overload` objects merged too (`overload: false`
 * wins). A key given as `undefined` means "not given": it never drops a default.
 *
 * @internal
 */
export function mergeOptions(
  defaults: BreakerOptions | undefined,
  options: BreakerOptions | undefined,
): BreakerOptions {
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
    merged.share = assignDefined(
      { ...defaults.share },
      options.share === true ? {} : options.share,
    );
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

/** Where the options given at `site` are written: the path prefix of their options in messages. @internal */
export function sitePath(site: string, name: string): string {
  if (site === FOR_ROOT) return `breakers${pathKey(name)}`;
  // forFeature({ name: options }): the argument is a record of name → options.
  if (site.startsWith(FOR_FEATURE)) return pathKey(name).replace(/^\./, '');
  return '';
}

/** Whether the plain options `options` set `option` (`halfOpen.maxProbes`). */
function sets(options: BreakerOptions | undefined, option: string): boolean {
  let value: unknown = options;
  for (const key of option.split('.')) value = isObject(value) ? value[key] : undefined;
  return value !== undefined;
}

/**
 * Checks the options one site gives a breaker, over the module's (already
 * checked) defaults, and returns them merged, as plain data: the object to
 * build the breaker from, whose resolution is kept (the breaker does not
 * resolve its options again, see `resolveForBreaker`). Errors name the
 * breaker, the site, and the option where the user wrote it: under `prefix`
 * (`breakers.payments`) when the breaker's own options set it, under
 * `defaults` when only the defaults do.
 *
 * @internal
 */
export function checkBreakerDefinition(
  name: string,
  options: unknown,
  defaults: BreakerOptions | undefined,
  site: string,
  prefix: string,
): { own: BreakerOptions | undefined; merged: BreakerOptions } {
  const subject = circuitBreakerMessages.definitionSubject(name, site === FOR_ROOT ? MODULE : site);
  const own = (option: string) =>
    option === 'options' ? prefix || 'options' : prefix === '' ? option : `${prefix}.${option}`;
  const copy =
    options === undefined
      ? undefined
      : copyBreakerOptions(breakerOptionChecker(name, { subject, pathOf: own }), options);
  const merged = mergeOptions(defaults, copy);
  // A default is to blame only when the breaker's own options leave it in place: an own `aggregate` replaces the default one whole.
  const ownSets = (option: string) =>
    sets(copy, option) ||
    (!MERGED_KEYS.includes(option.split('.')[0]!) && sets(copy, option.split('.')[0]!));
  const pathOf = (option: string) =>
    option !== 'options' && !ownSets(option) && sets(defaults, option)
      ? `defaults.${option}`
      : own(option);
  resolveForBreaker(name, merged, { subject, pathOf });
  return { own: copy, merged };
}

/** The options of forRoot() / forRootAsync() besides the module extras. @internal */
export const MODULE_KEYS = [
  'defaults',
  'breakers',
  'strict',
  'clock',
  'logging',
  'eventEmitter',
  'store',
  'faultInjection',
  'limiters',
  'criticalityHeader',
  'criticalityOf',
] as const;
const LOG_LEVELS = ['verbose', 'debug', 'log', 'warn'] as const;

/**
 * Checks the options of `CircuitBreakerModule.forRoot()` / `forRootAsync()`,
 * the breakers they define included, and returns them as a plain copy: what
 * the registry works with afterwards. Every error names the module or the
 * breaker, and the option's path (`breakers.payments.halfOpen.maxProbes`).
 *
 * @internal
 */
export function validateModuleOptions(given: unknown): CheckedModuleOptions {
  const check = new OptionChecker(MODULE);
  const options = check.record('', given, MODULE_KEYS, 'an object', false) as ModuleOptionsRecord;
  if (options.strict !== undefined) check.boolean('strict', options.strict);
  if (options.faultInjection !== undefined) check.boolean('faultInjection', options.faultInjection);
  if (options.clock !== undefined)
    check.service('clock', options.clock, ['now'], 'an object with a now() method');
  checkLogging(check, options.logging);
  if (options.eventEmitter !== undefined) {
    check.service(
      'eventEmitter',
      options.eventEmitter,
      ['emit'],
      'an object with an emit(event, payload) method, such as EventEmitter2',
    );
  }
  const store = checkStore(check, options.store);
  const defaults = checkDefaults(options.defaults, store);
  const merged = new Map<string, BreakerOptions>();
  const breakers = checkBreakers(check, options.breakers, defaults, store, merged);
  checkCriticalityOptions(check, options.criticalityHeader, options.criticalityOf);
  const limiters =
    options.limiters === undefined ? [] : checkLimiterDefinitions(check, options.limiters, true);
  return {
    options: { ...(options as CircuitBreakerModuleOptions), defaults, breakers },
    merged,
    limiters,
  };
}

/**
 * The module's options as `validateModuleOptions()` checked them, and each
 * breaker of `breakers` merged over the defaults: the options it is built
 * from, already resolved (see `checkBreakerDefinition`).
 *
 * @internal
 */
export interface CheckedModuleOptions {
  readonly options: CircuitBreakerModuleOptions;
  readonly merged: ReadonlyMap<string, BreakerOptions>;
  /** The limiters of `limiters`, checked in their keys (their values when the engine builds them). */
  readonly limiters: readonly LimiterDefinition[];
}

/** forRoot()'s options, read once, before each is checked. */
type ModuleOptionsRecord = Record<(typeof MODULE_KEYS)[number], unknown>;

/** `logging`: `false` or `{ level?, maxPerSecond? }`. */
function checkLogging(check: OptionChecker, given: unknown): void {
  if (given === undefined || given === false) return;
  const logging = check.record(
    'logging',
    given,
    ['level', 'maxPerSecond'],
    'false or { level?, maxPerSecond? }',
  );
  if (!isObject(logging)) return;
  if (logging.level !== undefined) check.oneOf('logging.level', logging.level, LOG_LEVELS);
  if (logging.maxPerSecond !== undefined)
    check.number(
      'logging.maxPerSecond',
      logging.maxPerSecond,
      { min: 1, integer: true },
      'an integer >= 1',
    );
}

/** `store`: a `BreakerStore`, with a coordinator that answers `mayProbe()`. */
function checkStore(check: OptionChecker, given: unknown): BreakerStore | undefined {
  if (given === undefined) return undefined;
  const expected =
    'a BreakerStore such as new RedisBreakerStore({ redis }) from nestjs-circuit-breaker/redis';
  const store = check.service<BreakerStore>('store', given, ['hydrate', 'close'], expected);
  check.service(
    'store',
    check.read(store, 'coordinator', 'store.coordinator'),
    ['mayProbe'],
    expected,
  );
  return store;
}

/** The defaults alone must make a valid breaker, so that a bad default fails at start-up, not at first use. */
function checkDefaults(
  given: unknown,
  store: BreakerStore | undefined,
): BreakerOptions | undefined {
  if (given === undefined) return undefined;
  const source = {
    subject: MODULE,
    pathOf: (option: string) => (option === 'options' ? 'defaults' : `defaults.${option}`),
  };
  const defaults = copyBreakerOptions(breakerOptionChecker('(defaults)', source), given);
  resolveBreakerOptions('(defaults)', defaults, source);
  if (store === undefined) refuseShareWithoutStore('(defaults)', defaults);
  return defaults;
}

/** `breakers`: each breaker's own options, kept (what `reconfigure()` patches), checked over the defaults here, merged into `mergedOf`. */
function checkBreakers(
  check: OptionChecker,
  given: unknown,
  defaults: BreakerOptions | undefined,
  store: BreakerStore | undefined,
  mergedOf: Map<string, BreakerOptions>,
): Record<string, BreakerOptions> | undefined {
  if (given === undefined) return undefined;
  const breakers: Record<string, BreakerOptions> = {};
  for (const [name, breakerOptions] of check.entries(
    'breakers',
    given,
    'a record of breaker name → options',
  )) {
    if (name === '') check.fail('breakers', circuitBreakerMessages.emptyBreakerName());
    const { own, merged } = checkBreakerDefinition(
      name,
      breakerOptions,
      defaults,
      FOR_ROOT,
      `breakers${pathKey(name)}`,
    );
    if (store === undefined) refuseShareWithoutStore(name, merged);
    breakers[name] = own ?? {};
    mergedOf.set(name, merged);
  }
  return breakers;
}

/** `share` needs a store to share through. */
function refuseShareWithoutStore(name: string, options: BreakerOptions): void {
  if (options.share !== undefined && options.share !== false)
    throw new BreakerConfigError(circuitBreakerMessages.shareWithoutStore(name), name, 'share');
}
