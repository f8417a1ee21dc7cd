import { CallTimeoutError, isCallRejected, type CallRejectedError } from './core/index.js';
import { CODE_HEADER } from './core/classify/classify.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import type { CircuitBreakerHttpOptions } from './interfaces/circuit-breaker-http-options.interface.js';
import { announcedRetryAfterMs, retryAfterHeader } from './retry-after-header.js';

/** The default JSON body of a 503 for a rejected call: nothing internal. */
type UnavailableBody = { statusCode: 503; error: 'Service Unavailable'; message: string };

/** The default JSON body of a 503 for a request a concurrency limiter shed: nothing internal. */
type ShedBody = {
  statusCode: 503;
  error: 'Service Unavailable';
  code: 'LOAD_SHED';
  message: string;
};

/** The default JSON body of a 504 for a call that timed out: nothing internal. */
type TimedOutBody = { statusCode: 504; error: 'Gateway Timeout'; message: string };

/**
 * The JSON body of a 503 (rejected call) or 504 (call that timed out) the
 * filter sends without `httpFilter.body`: nothing internal by default, and
 * with `httpFilter: { details: true }` the breaker's name and the reason
 * (503) or the deadline (504).
 *
 * @publicApi
 */
export type CircuitBreakerResponseBody =
  | { statusCode: 503; error: 'Service Unavailable'; message: string }
  | { statusCode: 503; error: 'Service Unavailable'; code: 'LOAD_SHED'; message: string }
  | {
      statusCode: 503;
      error: 'Service Unavailable';
      message: string;
      code?: 'LOAD_SHED';
      breaker: string;
      reason: CallRejectedError['reason'];
      retryAfterMs?: number;
    }
  | { statusCode: 504; error: 'Gateway Timeout'; message: string }
  | {
      statusCode: 504;
      error: 'Gateway Timeout';
      message: string;
      breaker: string;
      timeoutMs: number;
    };

/**
 * What to answer for a breaker error: the status, the headers to set
 * (`Retry-After` in whole seconds, rounded up and at most 86,400, when the
 * breaker knows when to retry) and
 * the JSON body: a `CircuitBreakerResponseBody`, or what `httpFilter.body`
 * returned.
 *
 * @publicApi
 */
export interface CircuitBreakerHttpResponse {
  status: 503 | 504;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * True for the errors `CircuitBreakerExceptionFilter` maps: a `CallRejectedError`
 * (also from another copy of the package) or a `CallTimeoutError`. Not
 * exported: `toHttpResponse(e) !== undefined` says the same to users.
 *
 * @internal
 */
export function isBreakerHttpError(
  exception: unknown,
): exception is CallRejectedError | CallTimeoutError {
  return isCallRejected(exception) || exception instanceof CallTimeoutError;
}

/**
 * The breaker error `exception` is, or the one a `TypeError` wraps as its
 * `cause`: `fetch()` through a dispatcher with a breaker rejects with
 * `TypeError('fetch failed')` whose cause is the refusal or the timeout.
 * Only that wrapping: an application's own error with a breaker error as its
 * cause (`new BadGatewayException('...', { cause })`) stays the
 * application's. `undefined` when there is none.
 *
 * @internal
 */
export function breakerErrorIn(
  exception: unknown,
): CallRejectedError | CallTimeoutError | undefined {
  if (isBreakerHttpError(exception)) return exception;
  if (!(exception instanceof TypeError)) return undefined;
  let cause: unknown;
  try {
    cause = exception.cause;
  } catch {
    // A cause that throws when read is no breaker error (and must not break Nest's choice of filter).
    return undefined;
  }
  return isBreakerHttpError(cause) ? cause : undefined;
}

/**
 * The HTTP answer for a breaker error, or `undefined` for any other value: what
 * `CircuitBreakerExceptionFilter` sends, for a catch-all filter or an error
 * envelope that writes the response itself. `options` are those of
 * `httpFilter` (default: bodies without breaker names).
 *
 * @publicApi
 */
export function toHttpResponse(
  exception: unknown,
  options: CircuitBreakerHttpOptions = {},
): CircuitBreakerHttpResponse | undefined {
  if (!isBreakerHttpError(exception)) return undefined;
  if (isCallRejected(exception)) {
    const retryAfter = retryAfterHeader(exception.retryAfterMs);
    const headers: Record<string, string> =
      retryAfter === undefined ? {} : { 'Retry-After': retryAfter };
    // A shed request says so: a calling breaker counts it as overload, which asks for no pause.
    if (exception.code === 'LOAD_SHED') headers[CODE_HEADER] = 'LOAD_SHED';
    return { status: 503, headers, body: bodyOf(exception, 503, options) };
  }
  return { status: 504, headers: {}, body: bodyOf(exception, 504, options) };
}

function bodyOf(
  exception: CallRejectedError | CallTimeoutError,
  status: 503 | 504,
  options: CircuitBreakerHttpOptions,
): unknown {
  if (options.body !== undefined) {
    const custom = options.body(exception, status);
    if (custom !== undefined) return custom;
  }
  if (isCallRejected(exception)) {
    // A shed request is this service's own overload, not a dependency's: the body says so, with a code to branch on.
    const body: UnavailableBody | ShedBody = isShed(exception)
      ? {
          statusCode: 503,
          error: 'Service Unavailable',
          code: 'LOAD_SHED',
          message: circuitBreakerMessages.httpOverloaded(),
        }
      : {
          statusCode: 503,
          error: 'Service Unavailable',
          message: circuitBreakerMessages.httpUnavailable(),
        };
    if (options.details !== true) return body;
    const retryAfterMs = announcedRetryAfterMs(exception.retryAfterMs);
    const detailed: CircuitBreakerResponseBody = {
      ...body,
      message: exception.message,
      breaker: exception.breakerName,
      reason: exception.reason,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
    return detailed;
  }
  const timeout = exception as CallTimeoutError;
  const body: TimedOutBody = {
    statusCode: 504,
    error: 'Gateway Timeout',
    message: circuitBreakerMessages.httpTimedOut(),
  };
  if (options.details !== true) return body;
  const detailed: CircuitBreakerResponseBody = {
    ...body,
    message: timeout.message,
    breaker: timeout.breakerName,
    timeoutMs: timeout.timeoutMs,
  };
  return detailed;
}

/** Whether a rejection is a concurrency limiter's refusal (reason `'shed'`). @internal */
export function isShed(rejection: CallRejectedError): boolean {
  return (rejection.reason as string) === 'shed';
}

/**
 * The filter's options from the module's `httpFilter`, or `undefined` when the
 * filter is off. Throws at start-up for a value the filter cannot work with.
 *
 * @internal
 */
export function resolveHttpOptions(value: unknown): CircuitBreakerHttpOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      circuitBreakerMessages.invalidHttpFilter('httpFilter', value, HTTP_FILTER_FIX),
    );
  }
  const options = value as Record<string, unknown>;
  for (const key of Object.keys(options)) {
    if (key !== 'details' && key !== 'body') {
      throw new TypeError(
        circuitBreakerMessages.invalidHttpFilter(
          `httpFilter.${key}`,
          options[key],
          circuitBreakerMessages.httpFilterFix.unknown,
        ),
      );
    }
  }
  if (options.details !== undefined && typeof options.details !== 'boolean') {
    throw new TypeError(
      circuitBreakerMessages.invalidHttpFilter(
        'httpFilter.details',
        options.details,
        circuitBreakerMessages.httpFilterFix.details,
      ),
    );
  }
  if (options.body !== undefined && typeof options.body !== 'function') {
    throw new TypeError(
      circuitBreakerMessages.invalidHttpFilter(
        'httpFilter.body',
        options.body,
        circuitBreakerMessages.httpFilterFix.body,
      ),
    );
  }
  if (options.details !== undefined && options.body !== undefined) {
    throw new TypeError(
      circuitBreakerMessages.invalidHttpFilter(
        'httpFilter.details',
        options.details,
        circuitBreakerMessages.httpFilterFix.detailsBesideBody,
      ),
    );
  }
  return { ...(options as CircuitBreakerHttpOptions) };
}

/** @internal What to pass as httpFilter, for messages wherever its shape is checked. */
export const HTTP_FILTER_FIX = circuitBreakerMessages.httpFilterFix.shape;
