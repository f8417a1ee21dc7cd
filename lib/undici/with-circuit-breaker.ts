import type { Dispatcher } from 'undici';
import {
  BreakerHookError,
  FAMILY_DEFAULT_KEY,
  type Breaker,
  type CallPermit,
} from '../core/index.js';
import { keyFor } from '../circuit-key.js';
import { BreakerDispatchHandler } from './breaker-dispatch.handler.js';
import { originKeyOf } from '../request-origin.js';
import type { UndiciCircuitBreakerOptions } from './undici-circuit-breaker-options.interface.js';
import { undiciMessages } from './undici.messages.js';

const DEFAULT_FAILURE_BODY_LIMIT = 65_536;

/**
 * An undici interceptor that puts every request of a dispatcher through a
 * circuit breaker: `new Agent().compose(withCircuitBreaker({ breaker }))`,
 * then that dispatcher for undici's `request()`, `fetch` (its `dispatcher`
 * option) or `setGlobalDispatcher()` (global `fetch` included).
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
): Dispatcher.DispatcherComposeInterceptor {
  const { breaker, key, skip, timeoutMs } = options ?? ({} as UndiciCircuitBreakerOptions);
  checkOptions(options);
  const failureBodyLimit = options.failureBodyLimit ?? DEFAULT_FAILURE_BODY_LIMIT;
  const family = breaker.config.perKey !== undefined;
  const targetOf = (request: Dispatcher.DispatchOptions): Breaker =>
    family ? breaker.forKey(familyKeyOf(breaker, key, request)) : breaker;
  return (dispatch) =>
    function dispatchThroughBreaker(request, handler) {
      if (skip !== undefined && skips(breaker, skip, request)) return dispatch(request, handler);
      const target = targetOf(request);
      let permit: CallPermit;
      try {
        // A deadline the breaker refuses (or a timeoutMs that throws) errors the request, unsent.
        permit = target.acquire(
          timeoutMs === undefined ? undefined : { timeoutMs: timeoutMs(request) },
        );
      } catch (refusal) {
        return refuse(handler, refusal as Error);
      }
      return new BreakerDispatchHandler(permit, handler, target.name, failureBodyLimit).start(
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
