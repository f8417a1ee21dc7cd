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
 * `statusCode` on the error itself (http-errors). `undefined` when there is
 * none, or when reading it throws.
 *
 * @publicApi
 */
export function httpStatusOf(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return readHttpStatus(value as Loose);
  } catch {
    // A getter or a Proxy trap that throws: the value carries no status we can trust.
    return undefined;
  }
}

// Each property is read once: a getter may answer differently the second time.
function readHttpStatus(value: Loose): number | undefined {
  const getStatus = value.getStatus;
  if (typeof getStatus === 'function') {
    const status: unknown = getStatus.call(value);
    if (isHttpStatus(status)) return status;
  }
  const status = value.status;
  if (isHttpStatus(status)) return status;
  const statusCode = value.statusCode;
  if (isHttpStatus(statusCode)) return statusCode;
  const response = value.response;
  if (typeof response === 'object' && response !== null) {
    const responseStatus = response.status;
    if (isHttpStatus(responseStatus)) return responseStatus;
    const responseStatusCode = response.statusCode;
    if (isHttpStatus(responseStatusCode)) return responseStatusCode;
  }
  return undefined;
}

function isHttpStatus(value: unknown): value is number {
  return typeof value === 'number' && value >= 100 && value <= 599;
}

/** The Node or undici error code of an error, or of the error that caused it (fetch wraps them). */
function errorCodeOf(error: Loose): string | undefined {
  const code = error.code;
  if (typeof code === 'string') return code;
  const cause = error.cause as Loose | undefined;
  if (typeof cause !== 'object' || cause === null) return undefined;
  const causeCode = cause.code;
  return typeof causeCode === 'string' ? causeCode : undefined;
}

function classifyStatus(status: number, error: unknown, overload: boolean): CallOutcome {
  if (status === 429) return overload ? 'overload' : 'failure';
  if (status === 503)
    return overload && retryAfterOf(error, 0) !== undefined ? 'overload' : 'failure';
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
 * - anything unrecognised is a failure, and so is an error whose getters or
 *   Proxy traps throw while they are read (the default classification never
 *   throws: the call is counted and the caller gets its own error).
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
 * any other value is a success. A value whose `status` or `headers` cannot be
 * read (a throwing getter, a revoked Proxy) is a failure.
 *
 * @publicApi
 */
export function defaultClassifyResult(value: unknown, overload = true): CallOutcome {
  if (typeof value !== 'object' || value === null) return 'success';
  let status: unknown;
  try {
    const loose = value as Loose;
    status = loose.status;
    if (typeof status !== 'number' || typeof loose.headers !== 'object' || loose.headers === null)
      return 'success';
  } catch {
    // A result that cannot even be read is no answer the caller can use.
    return 'failure';
  }
  return isHttpStatus(status) ? classifyStatus(status, value, overload) : 'success';
}

/**
 * What kind of failure a counted failure was, for metrics.
 *
 * @internal
 */
export function failureCategoryOf(error: unknown): FailureCategory {
  if (typeof error !== 'object' || error === null) return 'other';
  try {
    return readFailureCategory(error as Loose);
  } catch {
    return 'other';
  }
}

function readFailureCategory(error: Loose): FailureCategory {
  if (error instanceof CallTimeoutError || error.name === 'TimeoutError') return 'timeout';
  const code = errorCodeOf(error);
  if (code !== undefined) {
    if (TIMEOUT_CODES.has(code) || (code.startsWith('UND_ERR_') && code.endsWith('TIMEOUT')))
      return 'timeout';
    if (CONNECTION_CODES.has(code) || code.startsWith('UND_ERR_')) return 'connection';
  }
  const status = readHttpStatus(error);
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
 * `undefined` when there is none, or when reading it throws.
 *
 * @publicApi
 */
export function retryAfterOf(value: unknown, now: number): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return readRetryAfter(value as Loose, now);
  } catch {
    // A hint that cannot be read is no hint: the breaker's own open duration applies.
    return undefined;
  }
}

function readRetryAfter(value: Loose, now: number): number | undefined {
  const own = value.retryAfterMs;
  if (isPause(own)) return own;
  const response =
    typeof value.response === 'object' && value.response !== null ? value.response : undefined;
  const fromHeaders = headerValue(value.headers) ?? headerValue(response?.headers);
  if (fromHeaders !== undefined) return parseRetryAfter(fromHeaders, now);
  if (response !== undefined) {
    const fromResponse = response.retryAfterMs;
    if (typeof fromResponse === 'number') return isPause(fromResponse) ? fromResponse : undefined;
  }
  const getResponse = value.getResponse;
  if (typeof getResponse === 'function') {
    const body: unknown = getResponse.call(value);
    if (typeof body === 'object' && body !== null) {
      const ms = (body as Loose).retryAfterMs;
      if (isPause(ms)) return ms;
      const header = (body as Loose).retryAfter;
      if (typeof header === 'number' || typeof header === 'string')
        return parseRetryAfter(String(header), now);
    }
  }
  return undefined;
}

/** A usable pause: a finite number of milliseconds, not negative. Infinity is a broken hint, not a long one. */
function isPause(value: unknown): value is number {
  return typeof value === 'number' && value >= 0 && value !== Number.POSITIVE_INFINITY;
}

function headerValue(headers: unknown): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const h = headers as { get?: unknown } & Record<string, unknown>;
  // fetch Headers and axios AxiosHeaders both answer get(); plain objects hold lower-case names.
  const raw =
    typeof h.get === 'function'
      ? (h.get as (name: string) => unknown).call(headers, 'retry-after')
      : (h['retry-after'] ?? h['Retry-After']);
  if (typeof raw === 'number') return String(raw);
  if (Array.isArray(raw)) return typeof raw[0] === 'string' ? raw[0] : undefined;
  return typeof raw === 'string' && raw !== '' ? raw : undefined;
}

/**
 * Parses a `Retry-After` value (RFC 9110: delta-seconds or an HTTP-date) into
 * milliseconds from `now`; a date in the past gives 0, garbage (or more
 * seconds than a finite number of milliseconds holds) `undefined`.
 *
 * @publicApi
 */
export function parseRetryAfter(value: string, now: number): number | undefined {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    // More digits than a double holds: garbage, not a wait of Infinity.
    const ms = Number(trimmed) * 1000;
    return Number.isFinite(ms) ? ms : undefined;
  }
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
