import { breakerMessages } from './core/errors/breaker.messages.js';
import type { FaultInjectionOptions, StateChangeEvent } from './core/index.js';
import { describeFault, describeValue } from './core/options/option.messages.js';

/**
 * Every text the Nest layer shows a person: each names the breaker and the
 * site (where in the application a breaker is defined or named:
 * `@CircuitBreaker() on Class.method`, `CircuitBreakerModule.forRoot({ breakers })`,
 * ...), and each error or warning ends with what to do. A decorator's
 * messages take the method's `qualifiedName` (`Class.method`).
 *
 * @internal
 */
export const circuitBreakerMessages = {
  faultInjected: (name: string, fault: FaultInjectionOptions) =>
    `Circuit breaker "${name}": fault injected (${faultSummary(fault)}); its calls see it instead of the dependency's answer until the fault is removed.`,
  faultRemoved: (name: string, injected: number) =>
    `Circuit breaker "${name}": injected fault removed, after ${injected} call${injected === 1 ? '' : 's'} got it.`,
  unknownBreaker: (name: string, known: readonly string[]) =>
    `No circuit breaker named "${name}". Known breakers: ${known.length === 0 ? '(none)' : known.map((k) => `"${k}"`).join(', ')}. ` +
    'Define it in CircuitBreakerModule.forRoot({ breakers }) or forFeature(), or use getOrCreate().',
  strictUnknown: (name: string, site: string, suggestion?: string) =>
    `Circuit breaker "${name}" used by ${site} is not defined, and CircuitBreakerModule is strict. ` +
    (suggestion === undefined
      ? 'Define it in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }), or check the name for a typo.'
      : `Did you mean "${suggestion}"? Fix the name, or define "${name}" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }).`),
  undefinedName: (
    name: string,
    site: string,
    suggestion: string | undefined,
    defined: readonly string[],
  ) =>
    `Circuit breaker "${name}" used by ${site} is not defined: it was built from the module's defaults, beside the configured breakers. ` +
    (suggestion === undefined
      ? `Defined breakers: ${listNames(defined)}. `
      : `Did you mean "${suggestion}"? `) +
    `Fix the name, or define "${name}" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }) if it is meant to be a breaker of its own (strict: true makes this an error).`,
  duplicateRoot: (registrations: ReadonlyArray<{ method: string; importers: readonly string[] }>) =>
    `CircuitBreakerModule is registered ${registrations.length} times in one application: ` +
    registrations
      .map(
        (r) =>
          `${r.method} imported by ${r.importers.length === 0 ? 'a module built dynamically' : r.importers.join(', ')}`,
      )
      .join('; ') +
    ". Each registration builds its own registry and only the last one is injected, so the others' breakers, defaults and strict would be silently lost. " +
    'Call forRoot() (or forRootAsync()) once, in the root module, and forFeature() elsewhere.',
  conflictingOptions: (name: string, first: string, second: string) =>
    `Circuit breaker "${name}" has options set in two places: ${first} and ${second}. Set them in one place and refer to the breaker by name elsewhere.`,
  noRegistry: (name: string, qualifiedName: string) =>
    `Circuit breaker "${name}" on ${qualifiedName}: no CircuitBreakerRegistry was injected into this instance. ` +
    'Import CircuitBreakerModule.forRoot() (or forRootAsync()) in the root module, and let Nest create the instance: one created with `new` gets no registry.',
  registryAlone: () =>
    'This CircuitBreakerRegistry has no orchestrator: it was created with `new`, outside a Nest module. ' +
    'Get the registry from CircuitBreakerModule.forRoot() (or CircuitBreakerTestingModule.forRoot() in tests).',
  moduleMissing: (className: string, methods: readonly string[]) =>
    `${className} has @CircuitBreaker() methods (${methods.join(', ')}), but no CircuitBreakerRegistry was injected into it: CircuitBreakerModule is not imported where ${className} is provided, ` +
    "and every call would fail. Import CircuitBreakerModule.forRoot() (or forRootAsync()) once, in the root module; it is global by default (with isGlobal: false, import it in this class's module too).",
  integrationWithoutModule: (integration: string) =>
    `${integration} needs CircuitBreakerModule, whose CircuitBreakerRegistry it reads, and none is visible to it. ` +
    `Import CircuitBreakerModule.forRoot() (or forRootAsync()) in the root module, beside ${integration}, and keep it global (the default).`,
  answeringMissing: (className: string) =>
    `${className} built with new is missing its HttpAdapterHost: without it a refused HTTP request would answer 500 instead of 503. ` +
    `Pass it, new ${className}(registry, reflector, app.get(HttpAdapterHost), app.get(CircuitBreakerExceptionFilter)), or let Nest build it (list it in a module's providers and use app.get(${className})).`,
  invalidInjectName: (value: unknown) =>
    `@InjectCircuitBreaker() takes a breaker name, a non-empty string, got ${describeValue(value)}. Pass the name, e.g. @InjectCircuitBreaker('payments').`,
  missingFallbackMethod: (qualifiedName: string, fallback: string) =>
    `@CircuitBreaker() on ${qualifiedName}: option "fallback" names the method "${fallback}", which does not exist on the class. Declare it, or pass a function.`,
  interceptionTwice: (site: string, name: string, earlier: string) =>
    `${site} is given twice ("${name}" over "${earlier}"): a handling is one call of one breaker. Keep one, or call the other breaker inside the handler.`,
  keyFunctionThrew: (name: string, site: string, fault: unknown, defaultKey: string) =>
    `Circuit breaker "${name}" in ${site}: option "key" threw ${describeFault(fault)}; the call went on under the default key "${defaultKey}". Make the key function return the target's key, or undefined when there is none. Later errors of this site's key function are not reported again.`,
  keyNotAString: (name: string, site: string, key: unknown, defaultKey: string) =>
    `Circuit breaker "${name}" in ${site}: option "key" returned ${describeValue(key)}, not a string; the call went on under the default key "${defaultKey}". Return the target's key as a string, or undefined when there is none. Later errors of this site's key function are not reported again.`,
  keyMismatch: (name: string, site: string, perKey: boolean) =>
    perKey
      ? `Circuit breaker "${name}" is per-key (perKey), but ${site} gives no key. Add key: (...args) => target, so that each call goes to its target's breaker.`
      : `${site} gives a key, but circuit breaker "${name}" is not per-key. Configure perKey: { maxKeys } on it, or remove the key.`,
  uncacheableArguments: (qualifiedName: string, error: unknown) =>
    `@CircuitBreaker() on ${qualifiedName}: the lastGood fallback cannot key these arguments (${error instanceof Error ? error.message : String(error)}); such calls are not cached. Give fallback.lastGood a key function.`,
  deadlineOnSyncMethod: (qualifiedName: string, returns: string) =>
    `@CircuitBreaker() on ${qualifiedName}: option "timeoutMs" can never apply, since the method returns ${returns}: a deadline only ends a call that returns a Promise or an Observable. Remove timeoutMs, or make the method async.`,
  retryNeedsPromise: (qualifiedName: string) =>
    `@CircuitBreaker() on ${qualifiedName}: option "retry" only applies to a method that returns a Promise: a plain value cannot be waited for between attempts, and an Observable is retried with RxJS retry() around circuitBreaker(). Make the method async, or remove retry.`,
  notAMethod: (qualifiedName: string) =>
    `@CircuitBreaker() on ${qualifiedName}: can only decorate a method. Move it to a method, or wrap the call in breaker.execute() instead.`,
  invalidFeature: (value: unknown) =>
    `CircuitBreakerModule.forFeature() takes breaker names or a record of name → options, got ${describeValue(value)}. ` +
    "Pass ['payments'] to use breakers defined elsewhere, or { payments: { ... } } to define them here.",
  emptyFeature: () =>
    "CircuitBreakerModule.forFeature() got an empty record: pass ['payments'] to use breakers defined elsewhere, or { payments: { ... } } to define them here.",
  notABreaker: (what: string, value: unknown) =>
    `${what} takes a Breaker, got ${value === null ? 'null' : typeof value}. Pass one from @InjectCircuitBreaker(name) or registry.get(name).`,
  invalidHttpFilter: (option: string, value: unknown, fix: string) =>
    `CircuitBreakerModule: option "${option}" got ${describeValue(value)}. ${fix}`,
  httpBodyFactoryThrew: (fault: unknown) =>
    `CircuitBreakerModule: option "httpFilter.body" threw ${describeFault(fault)}; the default body was sent instead. Make the factory return a body (or undefined for the default) instead of throwing. Later errors of this kind are not logged again.`,
  httpBodyNotJson: (fault: unknown) =>
    `CircuitBreakerModule: option "httpFilter.body" returned a body that cannot be sent as JSON (${describeFault(fault)}); the default body was sent instead. Return plain data: no cycles, no BigInt, no function. Later errors of this kind are not logged again.`,
  /** The public body of a 503: says what the client can do, names nothing internal. */
  httpUnavailable: () => 'A dependency is unavailable; retry later.',
  /** The public body of a 503 for a request a concurrency limiter shed. */
  httpOverloaded: () => 'The service is overloaded; retry later.',
  /** The public body of a 504. */
  httpTimedOut: () => 'A dependency did not answer in time; retry later.',
  badBreakerName: (where: string, name: unknown) => `${where}: ${breakerMessages.badName(name)}`,
  emptyBreakerName: () =>
    'option "breakers" names a breaker "": give every breaker a non-empty name.',
  /** The subject of option errors about one breaker's definition: `Circuit breaker "payments" in CircuitBreakerModule.forFeature()`. */
  definitionSubject: (name: string, site: string) => `Circuit breaker "${name}" in ${site}`,
  /** Where a decorator names its breaker. */
  decoratorSite: (qualifiedName: string) => `@CircuitBreaker() on ${qualifiedName}`,
  /** Where a class injects a breaker by name. */
  injectionSite: (className: string | undefined) =>
    `@InjectCircuitBreaker() in ${className || 'an anonymous class'}`,
  /** Where forFeature(['name']) names a breaker. */
  featureSite: (name: string) => `CircuitBreakerModule.forFeature() of "${name}"`,
  noRequiredBreaker: (site: string) =>
    `${site}: names no breaker. Pass the names of the breakers the route needs, e.g. @RequireCircuitBreaker('payments', 'inventory').`,
  /** The subject of option errors of one `circuitBreaker()` operator. */
  operatorSubject: (breaker: string) => `circuitBreaker() on circuit breaker "${breaker}"`,
  /** What to do about each `httpFilter` option, for invalidHttpFilter. */
  httpFilterFix: {
    shape: 'Pass true, false, or { details?: boolean, body?: (error, status) => body }.',
    unknown: 'It is not an option of httpFilter: use details or body, or remove it.',
    details: 'Pass true to show breaker names in 503/504 bodies, false (the default) to hide them.',
    body: 'Pass a function (error, status) => body, or leave it out for the default body.',
    detailsBesideBody:
      'It has no effect beside httpFilter.body, which builds the whole body: remove details, and read error.breakerName in body if you want it.',
  },
  invalidObserveArgument: (argument: string, value: unknown, expected: string) =>
    `CircuitBreakerEvents.observe(): argument "${argument}" must be ${expected}, got ${describeValue(value)}. Pass it as observe(['stateChange'], (event) => ...).`,
  listenerThrew: (event: string, error: unknown) =>
    `A listener of ${event} threw: ${error instanceof Error ? error.message : String(error)}. The breaker carried on; catch errors inside the listener.`,
  transitionsNotLogged: (count: number, limit: number) =>
    `${count} more circuit breaker transition(s) not logged (limit ${limit} per second); see the metrics or GET the registry snapshot.`,
  /** The breaker a transition log line is about: `"hosts" [host-0]` for a per-key child. */
  transitionSubject: (breaker: string, key: string | undefined) =>
    key === undefined ? `"${breaker}"` : `"${breaker}" [${key}]`,
  /** Why a breaker opened, with the evidence of the rule that opened it. */
  openingEvidence: (change: StateChangeEvent) => {
    const { reason, window, consecutiveFailures, children } = change;
    if (reason === 'consecutive-failures' && consecutiveFailures !== undefined)
      return `${reason}: ${consecutiveFailures} failure${consecutiveFailures === 1 ? '' : 's'} in a row`;
    if (reason === 'open-ratio' && children !== undefined)
      return `${reason}: ${children.failing} of ${children.known} targets open or half-open`;
    if (reason === 'shared-open') return `${reason}: another replica found the dependency broken`;
    if (window === undefined) return reason;
    return reason === 'slow-call-rate'
      ? `${reason}: ${window.slowCalls} of ${window.calls} calls slow`
      : `${reason}: ${window.failures} of ${window.calls} calls failed (${Math.round((window.failures / Math.max(1, window.calls)) * 100)}%)`;
  },
  opened: (who: string, why: string, forMs: number) =>
    `Circuit breaker ${who} opened (${why}); calls fail fast for ${forMs} ms.`,
  halfOpened: (who: string) => `Circuit breaker ${who} is half-open: admitting probes.`,
  closed: (who: string, reason: string) => `Circuit breaker ${who} closed (${reason}).`,
  reconfigured: (who: string, changes: readonly string[], reset: readonly string[]) =>
    `Circuit breaker ${who} reconfigured: ${changes.length === 0 ? 'no option changed' : changes.join(', ')}` +
    (reset.length === 0 ? '; state and window kept.' : `; started afresh: ${reset.join(', ')}.`),
  forced: (who: string, state: string, reason: string, by: string | undefined) =>
    `Circuit breaker ${who} forced ${state}${by === undefined ? '' : ` by ${by}`}: ${reason}. release() ends it.`,
  released: (who: string) =>
    `Circuit breaker ${who} released from its forced state: closed, deciding for itself again.`,
  fleetNeedsStore: (name: string, method: string) =>
    `CircuitBreakerRegistry.control("${name}", { fleet: true }).${method}() needs a store that carries orders to every replica, and the module has none that does. ` +
    `Give CircuitBreakerModule.forRoot() a store (new RedisBreakerStore({ redis }) from 'nestjs-circuit-breaker/redis'), or use control("${name}") without { fleet: true } to act on this replica only.`,
  badFleetScope: (name: string, method: string, scope: unknown) =>
    `CircuitBreakerRegistry.${method}("${name}", scope): the scope must be { fleet: true } (every replica) or left out (this replica), got ${describeValue(scope)}.`,
  reloadRefused: (errors: readonly string[]) =>
    `CircuitBreakerRegistry.reload() refused the whole tree; nothing changed. ${errors.length === 1 ? 'One error' : `${errors.length} errors`}:\n` +
    errors.map((error) => `- ${error}`).join('\n') +
    '\nFix them and reload again.',
  shareWithoutStore: (name: string) =>
    `Circuit breaker "${name}": option "share" needs a store to share through. ` +
    'Configure one, e.g. CircuitBreakerModule.forRoot({ store: new RedisBreakerStore({ redis }) }) from nestjs-circuit-breaker/redis, or remove "share".',
};

/** At most ten names, quoted, for a message. */
function listNames(names: readonly string[]): string {
  if (names.length === 0) return '(none)';
  const shown = names
    .slice(0, 10)
    .map((n) => `"${n}"`)
    .join(', ');
  return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}

/** A checked fault in a few words: `failures, latency 200 ms, on 50% of calls`. */
function faultSummary(fault: FaultInjectionOptions): string {
  const parts: string[] = [];
  if (fault.fail !== undefined && fault.fail !== false) parts.push('failures');
  if (fault.overload !== undefined)
    parts.push(
      fault.overload.retryAfterMs === undefined
        ? 'overload'
        : `overload, Retry-After ${fault.overload.retryAfterMs} ms`,
    );
  if (fault.latencyMs !== undefined && fault.latencyMs > 0)
    parts.push(`latency ${fault.latencyMs} ms`);
  parts.push(
    fault.rate === undefined || fault.rate === 1
      ? 'on every call'
      : `on ${+(fault.rate * 100).toFixed(2)}% of calls${fault.random === undefined ? '' : ', drawn'}`,
  );
  return parts.join(', ');
}
