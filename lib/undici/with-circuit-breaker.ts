import type { Dispatcher } from 'undici';
import {
  BreakerHookError,
  FAMILY_DEFAULT_KEY,
  type Breaker,
  type CallPermit,
} from '../core/index.js';
import { keyFor } from '../circuit-key.js';
import { BreakerDispatchHandler } from './breaker-dispatch.handler.js';
import { BreakerLegacyHandler } from './breaker-legacy.handler.js';
import { originKeyOf } from '../request-origin.js';
import type { UndiciCircuitBreakerOptions } from './undici-circuit-breaker-options.interface.js';
import { undiciMessages } from './undici.messages.js';

const DEFAULT_FAILURE_BODY_LIMIT = 65_536;

/**
 * Puts every request of an undici dispatcher through a circuit breaker, in
 * one of two forms. `withCircuitBreaker(new Agent(), { breaker })` returns
 * that dispatcher with the breaker in front of it (the faster form: the
 * handlers of `fetch` and `request()` reach the dispatcher as they are);
 * `new Agent().compose(withCircuitBreaker({ breaker }))` is the same as an
 * interceptor, to compose with others (undici's `compose()` converts each
 * handler between its two handler APIs). Either is the dispatcher for
 * undici's `request()`, `fetch` (its `dispatcher` option) or
 * `setGlobalDispatcher()` (global `fetch` included).
 *
 * A refused request is never dispatched (no connection, nothing sent): the
 * caller gets the breaker's `CallRejectedError` (from `fetch`, as the `cause`
 * of its `TypeError`). The call is settled when the response's status and
 * headers arrive, classified by the breaker's `classifyResult` (by default
 * 5xx and 408 fail, 429 and 503 with `Retry-After` report overload), or by
 * the error before them. The breaker's deadline (or the request's own, from
 * `timeoutMs`) aborts the request if the headers have not come; the body's
 * download is not under it. The caller's
 * own abort is `ignored`.
 *
 * @publicApi
 */
export function withCircuitBreaker(
  options: UndiciCircuitBreakerOptions,
): Dispatcher.DispatcherComposeInterceptor;
/**
 * The dispatcher form: `dispatcher` with the breaker in front of it. Its
 * other methods (`close()`, `destroy()`, `compose()`...) are the
 * dispatcher's own.
 */
export function withCircuitBreaker<D extends Dispatcher>(
  dispatcher: D,
  options: UndiciCircuitBreakerOptions,
): D;
export function withCircuitBreaker<D extends Dispatcher>(
  first: UndiciCircuitBreakerOptions | D,
  second?: UndiciCircuitBreakerOptions,
): Dispatcher.DispatcherComposeInterceptor | D {
  if (second === undefined) {
    const admit = admission(first as UndiciCircuitBreakerOptions);
    return (dispatch) =>
      function dispatchThroughBreaker(request, handler) {
        return admit(request, handler, dispatch, undefined);
      };
  }
  const inner = first as D;
  if (typeof inner !== 'object' || inner === null || typeof inner.dispatch !== 'function')
    throw new TypeError(undiciMessages.notADispatcher(inner));
  const admit = admission(second);
  const dispatch = inner.dispatch.bind(inner);
  const dispatchThroughBreaker = (
    request: Dispatcher.DispatchOptions,
    handler: Dispatcher.DispatchHandler,
  ): boolean => admit(request, handler, dispatch, inner);
  // As undici's own compose() returns, the dispatcher with its dispatch() replaced; nothing extends undici's
  // classes. Its getters and most methods run on the dispatcher itself (close() of a dispatcher with #private
  // fields, a RetryAgent, throws on any other `this`); those that send through `this.dispatch` run on the proxy.
  // Bound once per method, so that a method read twice is the same function (an event listener's removal).
  const bound = new WeakMap<(...args: unknown[]) => unknown, unknown>();
  return new Proxy(inner, {
    get: (target, property) => {
      if (property === 'dispatch') return dispatchThroughBreaker;
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function' || THROUGH_DISPATCH.has(property)) return value;
      let own = bound.get(value as (...args: unknown[]) => unknown);
      if (own === undefined)
        bound.set(value as (...args: unknown[]) => unknown, (own = value.bind(target)));
      return own;
    },
  });
}

/** undici's methods that send through `this.dispatch()`: on the proxy, so that they go through the breaker. */
const THROUGH_DISPATCH: ReadonlySet<PropertyKey> = new Set([
  'request',
  'stream',
  'pipeline',
  'connect',
  'upgrade',
  'compose',
]);

type Admit = (
  request: Dispatcher.DispatchOptions,
  handler: Dispatcher.DispatchHandler,
  dispatch: Dispatcher.Dispatch,
  inner: Dispatcher | undefined,
) => boolean;

/**
 * How each request is admitted: skipped, refused, or dispatched under a
 * permit. With the dispatcher at hand (`inner`), a handler of undici's older
 * API (what `fetch` and `request()` give) gets a handler of that API, handed
 * to the dispatcher as it expects it.
 */
function admission(options: UndiciCircuitBreakerOptions): Admit {
  const { breaker, key, skip, timeoutMs } = options ?? ({} as UndiciCircuitBreakerOptions);
  checkOptions(options);
  const failureBodyLimit = options.failureBodyLimit ?? DEFAULT_FAILURE_BODY_LIMIT;
  const family = breaker.config.perKey !== undefined;
  return (request, handler, dispatch, inner) => {
    if (skip !== undefined && skips(breaker, skip, request)) return dispatch(request, handler);
    const target = family ? breaker.forKey(familyKeyOf(breaker, key, request)) : breaker;
    const legacy = inner !== undefined && typeof handler.onRequestStart !== 'function';
    let permit: CallPermit;
    try {
      // A deadline the breaker refuses (or a timeoutMs that throws) errors the request, unsent.
      permit = target.acquire(
        timeoutMs === undefined ? undefined : { timeoutMs: timeoutMs(request) },
      );
    } catch (refusal) {
      return legacy ? refuseLegacy(handler, refusal as Error) : refuse(handler, refusal as Error);
    }
    if (legacy)
      return new BreakerLegacyHandler(permit, handler, target, failureBodyLimit).start(
        inner,
        request,
      );
    return new BreakerDispatchHandler(permit, handler, target, failureBodyLimit).start(
      dispatch,
      request,
    );
  };
}

function checkOptions(options: UndiciCircuitBreakerOptions | undefined): void {
  const breaker = options?.breaker;
  if (typeof breaker !== 'object' || breaker === null || typeof breaker.acquire !== 'function')
    throw new TypeError(undiciMessages.notABreaker(breaker));
  const { key, skip, timeoutMs, failureBodyLimit } = options!;
  if (timeoutMs !== undefined && typeof timeoutMs !== 'function')
    throw new TypeError(undiciMessages.notAFunction(breaker.name, 'timeoutMs', timeoutMs));
  if (key !== undefined && typeof key !== 'function')
    throw new TypeError(undiciMessages.notAFunction(breaker.name, 'key', key));
  if (skip !== undefined && typeof skip !== 'function')
    throw new TypeError(undiciMessages.notAFunction(breaker.name, 'skip', skip));
  if (key !== undefined && breaker.config.perKey === undefined)
    throw new TypeError(undiciMessages.keyWithoutFamily(breaker.name));
  if (
    failureBodyLimit !== undefined &&
    (typeof failureBodyLimit !== 'number' || !(failureBodyLimit >= 0))
  )
    throw new TypeError(undiciMessages.invalidBodyLimit(breaker.name, failureBodyLimit));
}

function familyKeyOf(
  breaker: Breaker,
  key: UndiciCircuitBreakerOptions['key'],
  request: Dispatcher.DispatchOptions,
): string {
  if (key !== undefined)
    return keyFor(breaker, `${undiciMessages.site} option "key"`, key, request);
  return originKeyOf(request.origin) ?? FAMILY_DEFAULT_KEY;
}

/** A `skip` that throws is the application's bug: reported once, and the request goes through the breaker. */
function skips(
  breaker: Breaker,
  skip: (request: Dispatcher.DispatchOptions) => boolean,
  request: Dispatcher.DispatchOptions,
): boolean {
  try {
    return skip(request) === true;
  } catch (fault) {
    breaker.reportHookError(
      `skip@${undiciMessages.site}`,
      new BreakerHookError(undiciMessages.skipThrew(breaker.name, fault), fault),
    );
    return false;
  }
}

/** The refusal, told to a handler of undici's older API as undici tells an error before the request starts. */
function refuseLegacy(handler: Dispatcher.DispatchHandler, refusal: Error): boolean {
  if (typeof handler.onError !== 'function') throw refusal;
  handler.onError(refusal);
  return false;
}

/** The refusal, told to the caller's handler as undici tells an error before the request starts. */
function refuse(handler: Dispatcher.DispatchHandler, refusal: Error): boolean {
  handler.onResponseError?.(refusedController(refusal), refusal);
  return true;
}

function refusedController(reason: Error): Dispatcher.DispatchController {
  return {
    aborted: true,
    paused: false,
    reason,
    abort: () => {},
    pause: () => {},
    resume: () => {},
  };
}
