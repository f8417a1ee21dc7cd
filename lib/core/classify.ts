import type { CallOutcome, FailureCategory } from './breaker-state.js';
import { CallTimeoutError } from './breaker.errors.js';

/**
 * Decides how a rejected call counts. Return `undefined` to fall back to the
 * default classification.
 *
 * @publicApi
 */
export type ErrorClassifier = (error: unknown) => CallOutcome | undefined;

/**
 * Decides how a resolved call counts (a fetch `Response` with status 503
 * resolves, but the dependency failed). Return `undefined` to fall back to the
 * default classification.
 *
 * @publicApi
 */
export type ResultClassifier = (value: unknown) => CallOutcome | undefined;

// Errors that say the dependency could not be reached or did not answer.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ESOCKETTIMEDOUT',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED']);

type Loose = Record<string, unknown> & { response?: Loose; cause?: unknown };

/**
 * The HTTP status an error or a response carries, wherever the common clients
 * put it: Nest's `HttpException#getStatus()`, axios/got/superagent's
 * `error.response.status(Code)`, a fetch `Response#status`, or `status` /
 * `statusCode` on the error itself (http-errors).
 *
 * @publicApi
 */
export function httpStatusOf(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const loose = value as Loose;
  if (typeof loose.getStatus === 'function') {
    const status = (loose.getStatus as () => unknown).call(value);
    if (isHttpStatus(status)) return status;
  }
  if (isHttpStatus(loose.status)) return loose.status;
  if (isHttpStatus(loose.statusCode)) return loose.statusCode;
  const response = loose.response;
  if (typeof response === 'object' && response !== null) {
    if (isHttpStatus(response.status)) return response.status;
    if (isHttpStatus(response.statusCode)) return response.statusCode;
  }
  return undefined;
}

function isHttpStatus(value: unknown): value is number {
  return typeof value === 'number' && value >= 100 && value <= 599;
}

/** The Node or undici error code of an error, or of the error that caused it (fetch wraps them). */
function errorCodeOf(error: Loose): string | undefined {
  if (typeof error.code === 'string') return error.code;
  const cause = error.cause as Loose | undefined;
  if (typeof cause === 'object' && cause !== null && typeof cause.code === 'string') return cause.code;
  return undefined;
}

function classifyStatus(status: number, error: unknown, overload: boolean): CallOutcome {
  if (status === 429) return overload ? 'overload' : 'failure';
  if (status === 503) return overload && retryAfterOf(error, 0) !== undefined ? 'overload' : 'failure';
  if (status >= 500 || status === 408) return 'failure';
  // The dependency answered (a 400 is the caller's mistake, a 404 a valid answer).
  return 'success';
}

/**
 * The default classification of a rejected call.
 * - an HTTP status: 5xx and 408 are failures, 429 (and 503 with `Retry-After`)
 *   are `overload` when `overload` is on, every other status is a success;
 * - connection and DNS errors (`ECONNREFUSED`, `ECONNRESET`, `ETIMEDOUT`,
 *   `EPIPE`, `ENOTFOUND`, `EAI_AGAIN`, ...), undici `UND_ERR_*`, and timeouts
 *   are failures;
 * - anything unrecognised is a failure.
 *
 * A caller's own abort is recognised by the breaker itself (it knows the
 * caller's signal) and is `ignored`.
 *
 * @publicApi
 */
export function defaultClassifyError(error: unknown, overload = true): CallOutcome {
  const status = httpStatusOf(error);
  if (status !== undefined) return classifyStatus(status, error, overload);
  return 'failure';
}

/**
 * The default classification of a resolved call: an HTTP response (an object
 * with a numeric `status` and `headers`, such as a fetch `Response` or an
 * axios response accepted by `validateStatus`) is classified by its status;
 * any other value is a success.
 *
 * @publicApi
 */
export function defaultClassifyResult(value: unknown, overload = true): CallOutcome {
  if (typeof value !== 'object' || value === null) return 'success';
  const loose = value as Loose;
  if (typeof loose.status !== 'number' || typeof loose.headers !== 'object' || loose.headers === null) return 'success';
  return isHttpStatus(loose.status) ? classifyStatus(loose.status, value, overload) : 'success';
}

/**
 * What kind of failure a counted failure was, for metrics.
 *
 * @internal
 */
export function failureCategoryOf(error: unknown): FailureCategory {
  if (error instanceof CallTimeoutError) return 'timeout';
  if (typeof error !== 'object' || error === null) return 'other';
  const loose = error as Loose;
  if (loose.name === 'TimeoutError') return 'timeout';
  const code = errorCodeOf(loose);
  if (code !== undefined) {
    if (TIMEOUT_CODES.has(code) || (code.startsWith('UND_ERR_') && code.endsWith('TIMEOUT'))) return 'timeout';
    if (CONNECTION_CODES.has(code) || code.startsWith('UND_ERR_')) return 'connection';
  }
  const status = httpStatusOf(error);
  if (status === 408) return 'timeout';
  if (status !== undefined) return 'server';
  return 'other';
}

/**
 * The pause a dependency asked for, in milliseconds from `now`, or `undefined`.
 * Reads a `retryAfterMs` number on the error (or its response), a
 * `Retry-After` header (delta-seconds or HTTP-date) from a fetch `Response`,
 * axios/got/superagent `response.headers`, http-errors `headers`, or the body
 * of a Nest `HttpException` (`{ retryAfter }` or `{ retryAfterMs }`).
 *
 * @publicApi
 */
export function retryAfterOf(value: unknown, now: number): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const loose = value as Loose;
  if (typeof loose.retryAfterMs === 'number' && loose.retryAfterMs >= 0) return loose.retryAfterMs;
  const fromHeaders = headerValue(loose.headers) ?? headerValue(loose.response?.headers);
  if (fromHeaders !== undefined) return parseRetryAfter(fromHeaders, now);
  const response = loose.response;
  if (typeof response === 'object' && response !== null && typeof response.retryAfterMs === 'number') {
    return response.retryAfterMs >= 0 ? response.retryAfterMs : undefined;
  }
  if (typeof loose.getResponse === 'function') {
    const body = (loose.getResponse as () => unknown).call(value) as Loose | string;
    if (typeof body === 'object' && body !== null) {
      if (typeof body.retryAfterMs === 'number' && body.retryAfterMs >= 0) return body.retryAfterMs;
      if (typeof body.retryAfter === 'number' || typeof body.retryAfter === 'string') {
        return parseRetryAfter(String(body.retryAfter), now);
      }
    }
  }
  return undefined;
}

function headerValue(headers: unknown): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const h = headers as { get?: unknown } & Record<string, unknown>;
  // fetch Headers and axios AxiosHeaders both answer get(); plain objects hold lower-case names.
  const raw = typeof h.get === 'function' ? (h.get as (name: string) => unknown).call(headers, 'retry-after') : (h['retry-after'] ?? h['Retry-After']);
  if (typeof raw === 'number') return String(raw);
  if (Array.isArray(raw)) return typeof raw[0] === 'string' ? raw[0] : undefined;
  return typeof raw === 'string' && raw !== '' ? raw : undefined;
}

/**
 * Parses a `Retry-After` value (RFC 9110: delta-seconds or an HTTP-date) into
 * milliseconds from `now`; a date in the past gives 0, garbage `undefined`.
 *
 * @publicApi
 */
export function parseRetryAfter(value: string, now: number): number | undefined {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
