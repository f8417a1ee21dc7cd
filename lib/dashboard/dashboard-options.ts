import type { CanActivate, Type } from '@nestjs/common';
import { OptionChecker } from '../core/options/option-checker.js';
import type {
  CircuitBreakerDashboardAsyncOptions,
  CircuitBreakerDashboardGuard,
  CircuitBreakerDashboardOptions,
} from './circuit-breaker-dashboard-options.interface.js';
import {
  CIRCUIT_BREAKER_DASHBOARD_DEFAULTS as DEFAULTS,
  DASHBOARD_PATH,
} from './circuit-breaker-dashboard.constants.js';
import { circuitBreakerDashboardMessages as messages } from './circuit-breaker-dashboard.messages.js';
import { parseAllowedHost, type AllowedHost } from './dashboard-hosts.js';

const KNOWN_OPTIONS = [
  'path',
  'enabled',
  'guard',
  'control',
  'intervalMs',
  'maxStreams',
  'maxPendingDataLength',
  'topChildren',
  'allowedHosts',
];

/** The options, checked and complete; `guard` in the form `@UseGuards()` takes. @internal */
export interface ResolvedDashboardOptions {
  readonly path: string;
  readonly enabled: boolean;
  readonly guard: CanActivate | Type<CanActivate> | undefined;
  readonly control: boolean;
  readonly intervalMs: number;
  readonly maxStreams: number;
  readonly maxPendingDataLength: number;
  readonly topChildren: number;
  readonly allowedHosts: readonly AllowedHost[];
}

/** Checks every option when `forRoot()` is called, and fills in the defaults. @internal */
export function resolveDashboardOptions(given: unknown): ResolvedDashboardOptions {
  const check = new OptionChecker(messages.module);
  if (!check.isPlainObject('options', given)) throw new TypeError(messages.notAnObject(given));
  const o = check.record('', given, KNOWN_OPTIONS) as CircuitBreakerDashboardOptions;
  const path =
    o.path === undefined
      ? DEFAULTS.path
      : check.string('path', o.path, messages.expectedPath, (value) =>
          DASHBOARD_PATH.test(trimSlashes(value)),
        );
  const guard = o.guard === undefined ? undefined : asGuard(check, o.guard);
  const control = o.control === undefined ? DEFAULTS.control : check.boolean('control', o.control);
  if (control && guard === undefined) throw new TypeError(messages.controlWithoutGuard());
  const count = (option: string, value: unknown, fallback: number, min: number) =>
    value === undefined
      ? fallback
      : check.number(option, value, { min, integer: true }, `an integer >= ${min}`);
  return {
    path: trimSlashes(path),
    enabled: o.enabled === undefined ? DEFAULTS.enabled : check.boolean('enabled', o.enabled),
    guard,
    control,
    intervalMs: count('intervalMs', o.intervalMs, DEFAULTS.intervalMs, 100),
    maxStreams: count('maxStreams', o.maxStreams, DEFAULTS.maxStreams, 1),
    maxPendingDataLength: count(
      'maxPendingDataLength',
      o.maxPendingDataLength,
      DEFAULTS.maxPendingDataLength,
      1_024,
    ),
    topChildren: count('topChildren', o.topChildren, DEFAULTS.topChildren, 0),
    allowedHosts: o.allowedHosts === undefined ? [] : allowedHosts(check, o.allowedHosts),
  };
}

/** What `forRootAsync()` was given, checked when it is called: the routes' options and the factory. @internal */
export interface AsyncDashboardDefinition {
  readonly routes: Pick<ResolvedDashboardOptions, 'path' | 'control' | 'maxPendingDataLength'>;
  readonly options: CircuitBreakerDashboardAsyncOptions;
}

const ROUTE_OPTIONS = ['path', 'control', 'maxPendingDataLength'] as const;

/** Checks `forRootAsync()`'s argument; the routes' options are checked as `forRoot()` checks them (control's guard later). @internal */
export function checkAsyncDefinition(given: unknown): AsyncDashboardDefinition {
  const check = new OptionChecker(`${messages.module}.forRootAsync()`);
  if (!check.isPlainObject('options', given)) throw new TypeError(messages.notAnAsyncObject(given));
  const o = check.record('', given, [
    'imports',
    'inject',
    'useFactory',
    ...ROUTE_OPTIONS,
  ]) as unknown as CircuitBreakerDashboardAsyncOptions;
  check.func('useFactory', o.useFactory, 'a function returning the options', false);
  if (o.imports !== undefined && !Array.isArray(o.imports))
    check.invalid('imports', o.imports, 'an array of modules');
  if (o.inject !== undefined && !Array.isArray(o.inject))
    check.invalid('inject', o.inject, 'an array of providers to inject');
  // The same checks as forRoot(); control's need of a guard waits for the factory, which gives the guard.
  const { path, maxPendingDataLength } = resolveDashboardOptions({
    path: o.path,
    maxPendingDataLength: o.maxPendingDataLength,
  });
  const control = o.control === undefined ? DEFAULTS.control : check.boolean('control', o.control);
  return { routes: { path, control, maxPendingDataLength }, options: o };
}

/** The factory's result, checked, with the routes' options: what `forRoot()` would have been given. @internal */
export function resolveFactoryOptions(
  result: unknown,
  routes: AsyncDashboardDefinition['routes'],
): ResolvedDashboardOptions {
  if (typeof result !== 'object' || result === null || Array.isArray(result))
    throw new TypeError(messages.factoryResult(result));
  for (const option of ROUTE_OPTIONS) {
    if ((result as Record<string, unknown>)[option] !== undefined)
      throw new TypeError(messages.routeOptionInFactory(option));
  }
  return resolveDashboardOptions({ ...(result as object), ...routes });
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

/** A guard class stays a class (Nest builds it); an instance stays; a function becomes an instance. */
function asGuard(
  check: OptionChecker,
  guard: CircuitBreakerDashboardGuard,
): ResolvedDashboardOptions['guard'] {
  if (typeof guard === 'function') {
    const prototype: unknown = (guard as { prototype?: unknown }).prototype;
    if (
      typeof prototype === 'object' &&
      prototype !== null &&
      typeof (prototype as { canActivate?: unknown }).canActivate === 'function'
    )
      return guard as Type<CanActivate>;
    const canActivate = guard as Extract<
      CircuitBreakerDashboardGuard,
      (...args: never[]) => unknown
    >;
    return { canActivate: (context) => canActivate(context) };
  }
  return check.service<CanActivate>('guard', guard, ['canActivate'], messages.expectedGuard);
}

/** `allowedHosts`: every entry a host (with or without a port), or a domain with a leading dot; never a way to switch the check off. */
function allowedHosts(check: OptionChecker, given: unknown): AllowedHost[] {
  if (!Array.isArray(given)) check.invalid('allowedHosts', given, messages.expectedAllowedHosts);
  return given.map((entry: unknown, i) => {
    const option = `allowedHosts[${i}]`;
    if (entry === '*' || entry === '.') throw new TypeError(messages.allowedHostsWildcard(option));
    const host = typeof entry === 'string' ? parseAllowedHost(entry) : undefined;
    if (host !== undefined) return host;
    const url = typeof entry === 'string' ? hostOfUrl(entry) : undefined;
    if (url !== undefined)
      throw new TypeError(messages.allowedHostIsUrl(option, entry as string, url));
    return check.invalid(option, entry, messages.expectedAllowedHost, false);
  });
}

/** The host of an `http(s)://` URL given where a host was expected, to say what to write instead. */
function hostOfUrl(text: string): string | undefined {
  if (!/^https?:\/\//i.test(text)) return undefined;
  try {
    return new URL(text).host || undefined;
  } catch {
    return undefined;
  }
}
