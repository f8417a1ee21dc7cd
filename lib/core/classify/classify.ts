import type { CallOutcome, FailureCategory } from '../state/breaker-state.js';
import { CallTimeoutError } from '../errors/breaker.errors.js';

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
  // The dependency answered (a 400 is the caller's mistake, a 404 a valid answer).
  if (!isFailingStatus(status)) return 'success';
  if (status === 429) return overload ? 'overload' : 'failure';
  if (status === 503)
    return overload && (retryAfterOf(error, 0) !== undefined || isLoadShed(error))
      ? 'overload'
      : 'failure';
  return 'failure';
}

/** Whether a status alone can make a call anything but a success (5xx, 408, 429): the only ones `classifyStatus` reads further. */
function isFailingStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
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
 * any other value is a success. The headers are read only for a status that
 * can fail (5xx, 408, 429). A value whose `status` cannot be read (a throwing
 * getter, a revoked Proxy), or whose `headers` cannot be read beside such a
 * status, is a failure.
 *
 * @publicApi
 */
export function defaultClassifyResult(value: unknown, overload = true): CallOutcome {
  return typeof value !== 'object' || value === null
    ? 'success'
    : classifyResponse(value as Loose, overload);
}

/** `defaultClassifyResult()` of an object: a response by its status, its headers read only beside a failing one. */
function classifyResponse(loose: Loose, overload: boolean): CallOutcome {
  let status: unknown;
  try {
    status = loose.status;
  } catch {
    // A result that cannot even be read is no answer the caller can use.
    return 'failure';
  }
  // A status that counts as a success is one whether or not the value is an HTTP response: its headers are
  // not read (a client that parses them on first read, as the undici integration does, is spared the parse).
  if (!isHttpStatus(status) || !isFailingStatus(status)) return 'success';
  try {
    const headers = loose.headers;
    if (typeof headers !== 'object' || headers === null) return 'success';
  } catch {
    return 'failure';
  }
  return classifyStatus(status, loose, overload);
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
  const grpc = grpcCategoryOf(error);
  if (grpc !== undefined) return grpc;
  const status = readHttpStatus(error);
  if (status === 408) return 'timeout';
  if (status !== undefined) return 'server';
  return 'other';
}

const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/**
 * The category of a gRPC status (an integer `code` of 0-16 with `details` or
 * `metadata`, as grpc-js errors and `GrpcStatusError` carry it), as an HTTP
 * status gets one: `DEADLINE_EXCEEDED` is a timeout, `UNAVAILABLE` a
 * connection failure (grpc-js's status for a refused, reset or unresolved
 * connection), any other status the server's. `undefined` for anything else.
 */
function grpcCategoryOf(error: Loose): FailureCategory | undefined {
  const code = error.code;
  if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > 16)
    return undefined;
  const metadata = error.metadata;
  // A numeric code alone is too common (database drivers use them).
  if (typeof error.details !== 'string' && (typeof metadata !== 'object' || metadata === null))
    return undefined;
  if (code === GRPC_DEADLINE_EXCEEDED) return 'timeout';
  return code === GRPC_UNAVAILABLE ? 'connection' : 'server';
}

/**
 * The pause a dependency asked for, in milliseconds from `now`, or `undefined`.
 * Reads a `retryAfterMs` number on the error (or its response), the hint
 * headers (see `retryAfterFromHeaders`) of a fetch `Response`,
 * axios/got/superagent `response.headers` or http-errors `headers`, or the
 * body of a Nest `HttpException` (`{ retryAfter }` or `{ retryAfterMs }`).
 * A pause is finite, not negative, and at most 2^31-1 ms (longer ones are
 * capped); `undefined` when there is none, or when reading it throws.
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
  const own = pauseOf(value.retryAfterMs);
  if (own !== undefined) return own;
  const response =
    typeof value.response === 'object' && value.response !== null ? value.response : undefined;
  const fromHeaders =
    retryAfterFromHeaders(value.headers, now) ?? retryAfterFromHeaders(response?.headers, now);
  if (fromHeaders !== undefined) return fromHeaders;
  if (response !== undefined) {
    const fromResponse = pauseOf(response.retryAfterMs);
    if (fromResponse !== undefined) return fromResponse;
  }
  const getResponse = value.getResponse;
  if (typeof getResponse === 'function') {
    const body: unknown = getResponse.call(value);
    if (typeof body === 'object' && body !== null) {
      const ms = pauseOf((body as Loose).retryAfterMs);
      if (ms !== undefined) return ms;
      const header = (body as Loose).retryAfter;
      if (typeof header === 'number' || typeof header === 'string')
        return parseRetryAfter(String(header), now);
    }
  }
  return undefined;
}

// The longest pause a hint can ask for: the longest a timer can wait (anything longer is read as this).
const MAX_PAUSE_MS = 2_147_483_647;

/**
 * A usable pause: a finite number of milliseconds, not negative, rounded up
 * and capped; else `undefined`. A `retryAfterMs` of Infinity is a broken
 * hint, not a long one (digits too many to hold are capped: digitsPause).
 */
function pauseOf(value: unknown): number | undefined {
  if (typeof value !== 'number' || !(value >= 0) || value === Number.POSITIVE_INFINITY)
    return undefined;
  return Math.min(Math.ceil(value), MAX_PAUSE_MS);
}

/**
 * The pause the headers of a response ask for, in milliseconds from `now`, or
 * `undefined`. The first of these that holds a usable value wins, the most
 * precise first, as the OpenAI, Anthropic and Azure SDKs read them:
 * `retry-after-ms` and `x-ms-retry-after-ms` (milliseconds, a decimal number),
 * `Retry-After` (delta-seconds or an HTTP-date), the IETF `RateLimit` field
 * (the `t` of an exhausted quota, `r=0`; or `reset=` in its older dictionary
 * form), and `RateLimit-Reset` (delta-seconds). A `RateLimit` field that
 * shows quota remaining is no pause. `headers` is a fetch or axios
 * `Headers` (anything with `get(name)`) or a plain object (any case of names).
 *
 * @internal
 */
export function retryAfterFromHeaders(headers: unknown, now: number): number | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const read = headerReader(headers as Record<string, unknown>);
  return (
    millisecondsOf(read('retry-after-ms')) ??
    millisecondsOf(read('x-ms-retry-after-ms')) ??
    retryAfterOfText(read('retry-after'), now) ??
    rateLimitResetOf(read('ratelimit')) ??
    rateLimitResetFieldOf(read('ratelimit-reset'), read('ratelimit-remaining'))
  );
}

/**
 * The header a shed answer carries (`circuit-breaker-code: LOAD_SHED`, as
 * gRPC metadata carries it): the service is at its concurrency limit, so the
 * 503 is an overload, but it asks for no pause (a place frees as soon as a
 * request ends). @internal
 */
export const CODE_HEADER = 'circuit-breaker-code';

/** Whether an answer says it was shed by a concurrency limiter: its header, as a response or an error carries it. */
function isLoadShed(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  try {
    const loose = value as Loose;
    const response =
      typeof loose.response === 'object' && loose.response !== null
        ? (loose.response as Loose)
        : undefined;
    return (
      loose.upstreamCode === 'LOAD_SHED' ||
      codeHeaderOf(loose.headers) === 'LOAD_SHED' ||
      codeHeaderOf(response?.headers) === 'LOAD_SHED'
    );
  } catch {
    return false;
  }
}

/** The `circuit-breaker-code` header of `headers` (fetch `Headers`, axios', or a plain object). @internal */
export function codeHeaderOf(headers: unknown): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  return headerReader(headers as Record<string, unknown>)(CODE_HEADER);
}

/** Reads one header as text (the first of a repeated one), by its lower-case name. */
function headerReader(headers: Record<string, unknown>): (name: string) => string | undefined {
  const get = headers.get;
  if (typeof get === 'function')
    // fetch Headers and axios AxiosHeaders both answer get(), whatever the case of the name.
    return (name) => headerText(get.call(headers, name));
  let keys: Map<string, string> | undefined;
  return (name) => {
    if (name in headers) return headerText(headers[name]);
    // A plain object usually holds lower-case names (Node's); a hand-built one may not.
    keys ??= new Map(Object.keys(headers).map((key) => [key.toLowerCase(), key]));
    const key = keys.get(name);
    return key === undefined ? undefined : headerText(headers[key]);
  };
}

function headerText(raw: unknown): string | undefined {
  if (typeof raw === 'number') return String(raw);
  if (Array.isArray(raw)) return typeof raw[0] === 'string' ? raw[0] : undefined;
  return typeof raw === 'string' && raw !== '' ? raw : undefined;
}

function retryAfterOfText(text: string | undefined, now: number): number | undefined {
  return text === undefined ? undefined : parseRetryAfter(text, now);
}

// A decimal number, not negative, without exponent: "1500", "1500.25", "0.5".
const DECIMAL = /^\d+(?:\.\d+)?$/;

function millisecondsOf(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  return trimmed !== undefined && DECIMAL.test(trimmed) ? digitsPause(Number(trimmed)) : undefined;
}

function secondsOf(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  return trimmed !== undefined && DECIMAL.test(trimmed)
    ? digitsPause(Number(trimmed) * 1000)
    : undefined;
}

/**
 * A pause written in digits: however many there are, it is a long wait, not
 * garbage (RFC 9111 reads a delta-seconds too large to hold as the largest
 * it can), so past what a double holds it is capped like any long pause.
 */
function digitsPause(ms: number): number | undefined {
  return pauseOf(ms === Number.POSITIVE_INFINITY ? MAX_PAUSE_MS : ms);
}

/**
 * The IETF `RateLimit` field: a list of quota policies, each with its
 * parameters (`"default";r=0;t=30`: remaining units `r`, seconds to reset `t`).
 * The pause is the longest `t` among the exhausted quotas (`r=0`); none
 * exhausted, no pause. The draft's older dictionary form
 * (`limit=100, remaining=0, reset=30`) gives its `reset`, unless quota remains.
 */
function rateLimitResetOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  let longest: number | undefined;
  for (const item of text.split(',')) {
    const members = item.split(';');
    const head = parameter(members[0]!);
    if (head?.[0] === 'reset') {
      // The dictionary form: its members are the list's items.
      const remaining = /(?:^|,)\s*remaining\s*=\s*([^,;]*)/i.exec(text)?.[1]?.trim();
      return remaining === undefined || remaining === '0' ? secondsOf(head[1]) : undefined;
    }
    const params = new Map(
      members
        .slice(1)
        .map(parameter)
        .filter((p) => p !== undefined),
    );
    if (params.get('r') !== '0') continue;
    const reset = secondsOf(params.get('t'));
    if (reset !== undefined && (longest === undefined || reset > longest)) longest = reset;
  }
  return longest;
}

/** `name=value` as `[lower-case name, value]`, trimmed; `undefined` for anything else. */
function parameter(text: string): [string, string] | undefined {
  const eq = text.indexOf('=');
  return eq > 0 ? [text.slice(0, eq).trim().toLowerCase(), text.slice(eq + 1).trim()] : undefined;
}

/** `RateLimit-Reset` (delta-seconds), unless `RateLimit-Remaining` says quota remains. */
function rateLimitResetFieldOf(
  reset: string | undefined,
  remaining: string | undefined,
): number | undefined {
  if (reset === undefined || (remaining !== undefined && remaining.trim() !== '0'))
    return undefined;
  return secondsOf(reset);
}

/**
 * Parses a `Retry-After` value (RFC 9110: delta-seconds or an HTTP-date) into
 * milliseconds from `now`; a date in the past gives 0, garbage (a negative
 * number, an exponent, `Infinity`, a date that is not an HTTP-date)
 * `undefined`. Decimal seconds are read too; a longer pause than 2^31-1 ms
 * (however many digits it has) is capped.
 *
 * @publicApi
 */
export function parseRetryAfter(value: string, now: number): number | undefined {
  const trimmed = value.trim();
  if (DECIMAL.test(trimmed)) return digitsPause(Number(trimmed) * 1000);
  // Every HTTP-date form begins with a day name; Date.parse alone reads "-5" or "1.5" as dates of 2001.
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return pauseOf(Math.max(0, date - now));
}
