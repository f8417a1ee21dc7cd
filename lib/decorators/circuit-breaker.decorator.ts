import { Inject, Optional } from '@nestjs/common';
import { CIRCUIT_BREAKER_METADATA, REGISTRY_PROPERTY } from '../circuit-breaker.constants.js';
import { CircuitBreakerModuleMissingError } from '../circuit-breaker-module-missing.error.js';
import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import { OptionChecker } from '../core/options/option-checker.js';
import {
  BREAKER_OPTION_KEYS,
  breakerOptionChecker,
  copyBreakerOptions,
} from '../core/options/resolve-options.js';
import { resolveRetryOptions, type ResolvedRetryOptions } from '../core/retry/retry-options.js';
import type { RetryOptions } from '../core/index.js';
import { DecoratedMethod } from '../decorated-method.js';
import type {
  CircuitBreakerFallback,
  CircuitBreakerMethodOptions,
  LastGoodFallback,
} from '../interfaces/circuit-breaker-method-options.interface.js';

/**
 * Runs every call of the method through a named breaker.
 *
 * - `@CircuitBreaker()`: the breaker is named `ClassName.methodName`;
 * - `@CircuitBreaker('payments')`: a named breaker, shared by every method that names it;
 * - `@CircuitBreaker({ name?, fallback?, key?, ...breaker options })`.
 *
 * Works on providers, controller route handlers (above or below `@Get()`),
 * request-scoped providers, and methods returning a Promise (the breaker's
 * deadline applies), an Observable (each subscription is one call, through
 * `circuitBreaker()`) or a plain value (stays synchronous; a throw is the
 * failure; no deadline).
 *
 * @publicApi
 */
export function CircuitBreaker(
  nameOrOptions?: string | CircuitBreakerMethodOptions,
): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const className = typeof target === 'function' ? target.name : target.constructor.name;
    const qualifiedName = `${className}.${String(propertyKey)}`;
    const original = descriptor.value as unknown;
    if (typeof original !== 'function')
      throw new TypeError(circuitBreakerMessages.notAMethod(qualifiedName));
    const {
      name = qualifiedName,
      fallback,
      key,
      retry,
      ...breakerOptions
    } = normalize(nameOrOptions, target, qualifiedName);
    const returnType: unknown = Reflect.getMetadata('design:returntype', target, propertyKey);
    checkDeadlineApplies(
      qualifiedName,
      breakerOptions.timeoutMs,
      returnType,
      Reflect.hasMetadata('design:returntype', target, propertyKey),
    );

    const method = new DecoratedMethod({
      name,
      options: Object.keys(breakerOptions).length === 0 ? undefined : breakerOptions,
      qualifiedName,
      fallback,
      key,
      retry: retry as ResolvedRetryOptions | undefined,
      returnType,
      original: original as (...args: unknown[]) => unknown,
      named: name !== qualifiedName,
    });
    if (retry !== undefined && method.kind !== 'promise')
      throw new TypeError(circuitBreakerMessages.retryNeedsPromise(qualifiedName));
    // A named `function`, not an arrow: `this` is the instance Nest (or the caller) calls it on.
    const call = original as (...a: unknown[]) => unknown;
    // A Promise method without fallback or key, the common case, takes the shortest way to the breaker.
    const wrapped = method.direct
      ? function (this: Record<symbol, unknown>, ...args: unknown[]): unknown {
          return method.invokeDirect(this, call, args);
        }
      : function (this: Record<symbol, unknown>, ...args: unknown[]): unknown {
          return method.invoke(this, call, args);
        };
    // Nest reads route, guard and pipe metadata from the function it finds on the prototype.
    for (const metadataKey of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapped);
    }
    Reflect.defineMetadata(CIRCUIT_BREAKER_METADATA, method, wrapped);
    Object.defineProperty(wrapped, 'name', {
      value: (original as { name: string }).name,
      configurable: true,
    });
    Object.defineProperty(wrapped, 'length', {
      value: (original as { length: number }).length,
      configurable: true,
    });
    descriptor.value = wrapped as never;

    // Nest injects the registry of the application that creates the instance.
    if (typeof target !== 'function') {
      Inject(CircuitBreakerRegistry)(target, REGISTRY_PROPERTY);
      Optional()(target, REGISTRY_PROPERTY);
      checkRegistryAtInit(target, className, String(propertyKey));
    }
    return descriptor;
  };
}

/** The decorated methods of a prototype whose `onModuleInit` checks that the registry was injected. */
const CHECKED_METHODS = Symbol('nestjs-circuit-breaker.checked-methods');

/**
 * Makes a forgotten `CircuitBreakerModule` fail `app.init()` instead of every
 * call: the registry is injected as an optional property (so that two
 * applications in one process keep theirs apart), and Nest calls
 * `onModuleInit` on providers and controllers once every property is set.
 * The class's own hook (or an inherited one) still runs, after the check.
 * Request-scoped instances get no hook from Nest: their first call fails with
 * the same error class.
 */
function checkRegistryAtInit(prototype: object, className: string, method: string): void {
  const checked = Object.getOwnPropertyDescriptor(prototype, CHECKED_METHODS)?.value as
    string[] | undefined;
  if (checked !== undefined) {
    checked.push(method);
    return;
  }
  const hook = Object.getOwnPropertyDescriptor(prototype, 'onModuleInit');
  // An accessor or a non-configurable hook is the class's own business: the first call reports instead.
  if (hook !== undefined && (!('value' in hook) || hook.configurable === false)) return;
  if (!Object.isExtensible(prototype)) return;
  const methods = [method];
  Object.defineProperty(prototype, CHECKED_METHODS, { value: methods });
  const original: unknown =
    hook !== undefined ? hook.value : (prototype as { onModuleInit?: unknown }).onModuleInit;
  const onModuleInit = function onModuleInit(
    this: Record<symbol, unknown>,
    ...args: unknown[]
  ): unknown {
    if (this[REGISTRY_PROPERTY] === undefined)
      throw new CircuitBreakerModuleMissingError(
        circuitBreakerMessages.moduleMissing(className, methods),
        className,
      );
    return typeof original === 'function'
      ? (original as (...a: unknown[]) => unknown).apply(this, args)
      : undefined;
  };
  Object.defineProperty(prototype, 'onModuleInit', {
    value: onModuleInit,
    writable: true,
    configurable: true,
    enumerable: false,
  });
}

const METHOD_KEYS = ['name', 'fallback', 'key', 'retry'] as const;

/**
 * The decorator's options, read once and checked in full except the breaker
 * options' ranges (checked at start-up, over the module's defaults): a typo
 * or a wrong type fails where the class is declared.
 */
// What emitDecoratorMetadata says a method returns when it can only return synchronously.
const SYNCHRONOUS_RETURN_TYPES = new Map<unknown, string>([
  [String, 'string'],
  [Number, 'number'],
  [Boolean, 'boolean'],
  [Array, 'an array'],
  [Symbol, 'symbol'],
  [BigInt, 'bigint'],
]);

/**
 * A deadline set on a method declared to return a plain value could never end
 * anything: the call is over when the method returns. Such a method's
 * `timeoutMs` is a mistake, reported where the class is declared.
 */
function checkDeadlineApplies(
  qualifiedName: string,
  timeoutMs: unknown,
  returnType: unknown,
  declared: boolean,
): void {
  if (typeof timeoutMs !== 'number') return;
  const synchronous =
    SYNCHRONOUS_RETURN_TYPES.get(returnType) ??
    (declared && returnType === undefined ? 'void' : undefined);
  if (synchronous !== undefined)
    throw new TypeError(circuitBreakerMessages.deadlineOnSyncMethod(qualifiedName, synchronous));
}

function normalize(
  nameOrOptions: unknown,
  target: object,
  qualifiedName: string,
): CircuitBreakerMethodOptions {
  const check = new OptionChecker(circuitBreakerMessages.decoratorSite(qualifiedName));
  if (nameOrOptions === undefined) return {};
  if (typeof nameOrOptions === 'string')
    return {
      name: check.string('name', nameOrOptions, 'a non-empty string', (name) => name !== ''),
    };
  const given = check.record(
    '',
    nameOrOptions,
    [...METHOD_KEYS, ...BREAKER_OPTION_KEYS],
    'a breaker name or an options object',
  );
  const { name = qualifiedName, fallback, key, retry, ...breakerOptions } = given;
  check.string('name', name, 'a non-empty string', (value) => value !== '');
  if (key !== undefined) check.func('key', key, 'a function of the arguments returning a string');
  const checkedFallback =
    fallback === undefined ? undefined : checkFallback(check, target, qualifiedName, fallback);
  const subject = circuitBreakerMessages.definitionSubject(
    name as string,
    circuitBreakerMessages.decoratorSite(qualifiedName),
  );
  const breakerCheck = breakerOptionChecker(name as string, { subject });
  const options = copyBreakerOptions(breakerCheck, breakerOptions);
  return {
    ...options,
    name: name as string,
    fallback: checkedFallback,
    key: key as CircuitBreakerMethodOptions['key'],
    // Checked whole here: a retry policy is the method's, not the breaker's, so no module default applies to it.
    retry:
      retry === undefined
        ? undefined
        : (resolveRetryOptions(breakerCheck, retry) as unknown as RetryOptions),
  };
}

/** The fallback as checked: a `lastGood` fallback is a plain copy, so the cache uses what was checked. */
function checkFallback(
  check: OptionChecker,
  target: object,
  qualifiedName: string,
  fallback: unknown,
): CircuitBreakerFallback {
  if (typeof fallback === 'function') return fallback as CircuitBreakerFallback;
  if (typeof fallback === 'string') {
    // Legacy decorators run once the class body is complete, so every method is already there.
    if (typeof (target as Record<string, unknown>)[fallback] !== 'function')
      throw new TypeError(circuitBreakerMessages.missingFallbackMethod(qualifiedName, fallback));
    return fallback;
  }
  const expected = 'a method name, a function, or { lastGood: { maxAgeMs, maxEntries? } }';
  const { lastGood } = check.record('fallback', fallback, ['lastGood'], expected);
  if (lastGood === undefined) check.invalid('fallback', fallback, expected);
  const copy = check.record(
    'fallback.lastGood',
    lastGood,
    ['maxAgeMs', 'maxEntries', 'key'],
    '{ maxAgeMs, maxEntries?, key? }',
    false,
  );
  const { maxAgeMs, maxEntries, key } = copy;
  check.number(
    'fallback.lastGood.maxAgeMs',
    maxAgeMs,
    { min: 0, minExclusive: true, max: Number.MAX_VALUE },
    'a positive number of milliseconds',
    false,
  );
  if (maxEntries !== undefined)
    check.number(
      'fallback.lastGood.maxEntries',
      maxEntries,
      { min: 1, integer: true },
      'an integer >= 1',
    );
  if (key !== undefined)
    check.func('fallback.lastGood.key', key, 'a function of the arguments returning a string');
  return { lastGood: copy as LastGoodFallback['lastGood'] };
}
