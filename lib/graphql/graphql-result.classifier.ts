import type { CallOutcome } from '../core/index.js';

type Loose = Record<string, unknown>;

/** `extensions.code`s that say the server could not do its job. */
const FAILURE_CODES = new Set([
  'INTERNAL_SERVER_ERROR',
  'DOWNSTREAM_SERVICE_ERROR',
  'SERVICE_UNAVAILABLE',
  'GATEWAY_TIMEOUT',
  'CALL_TIMEOUT',
  'UNAVAILABLE',
  'DEADLINE_EXCEEDED',
  'INTERNAL',
]);
/** `extensions.code`s that say the server is shedding load: back off, do not open. */
const OVERLOAD_CODES = new Set(['TOO_MANY_REQUESTS', 'RATE_LIMITED', 'RESOURCE_EXHAUSTED']);

/**
 * Classifies a GraphQL response that arrived with HTTP 200 but carries
 * `errors`, for a breaker's `classifyResult` option: the parsed body
 * (`{ data, errors }`, what `await response.json()` gives) or an axios
 * response of one. Each error counts by its `extensions.code`:
 *
 * - `INTERNAL_SERVER_ERROR`, `DOWNSTREAM_SERVICE_ERROR`, `SERVICE_UNAVAILABLE`,
 *   `GATEWAY_TIMEOUT`, `CALL_TIMEOUT`, and an error without a code, fail;
 * - a remote breaker's `CIRCUIT_OPEN` (a remote limiter's `LOAD_SHED`) is
 *   `overload` when it carries `retryAfterMs`, a failure otherwise; `TOO_MANY_REQUESTS`, `RATE_LIMITED`
 *   are `overload`;
 * - any other code (`BAD_USER_INPUT`, `GRAPHQL_VALIDATION_FAILED`,
 *   `UNAUTHENTICATED`, `FORBIDDEN`, an application's own) is the server's
 *   deliberate answer: success.
 *
 * The worst error decides (failure, then overload). A response without
 * errors, or anything that is no GraphQL response, is left to the default
 * classification (`undefined`). `overload: false` counts overloads as failures.
 *
 * @publicApi
 */
export function classifyGraphQLResult(value: unknown, overload = true): CallOutcome | undefined {
  try {
    const errors = errorsOf(value);
    if (!Array.isArray(errors) || errors.length === 0) return undefined;
    let worst: CallOutcome = 'success';
    for (const error of errors as unknown[]) {
      const outcome = outcomeOf(error, overload);
      if (outcome === 'failure') return 'failure';
      if (outcome === 'overload') worst = 'overload';
    }
    return worst;
  } catch {
    // An answer that cannot even be read is no answer the caller can use, as for any result.
    return 'failure';
  }
}

/** The `errors` of a parsed body, or of an axios response's `data` when it answered 200. */
function errorsOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  const loose = value as Loose;
  if (Array.isArray(loose.errors)) return loose.errors;
  if (typeof loose.status === 'number' && typeof loose.headers === 'object') {
    // Any other status is the HTTP classification's to decide.
    if (loose.status !== 200) return undefined;
    const body = loose.data;
    return typeof body === 'object' && body !== null ? (body as Loose).errors : undefined;
  }
  return undefined;
}

function outcomeOf(error: unknown, overload: boolean): CallOutcome {
  const extensions =
    typeof error === 'object' && error !== null ? (error as Loose).extensions : undefined;
  const code =
    typeof extensions === 'object' && extensions !== null ? (extensions as Loose).code : undefined;
  if (typeof code !== 'string') return 'failure';
  if (FAILURE_CODES.has(code)) return 'failure';
  const refused = code === 'CIRCUIT_OPEN' || code === 'LOAD_SHED';
  const overloaded =
    OVERLOAD_CODES.has(code) ||
    code === 'LOAD_SHED' ||
    (refused && typeof (extensions as Loose).retryAfterMs === 'number');
  if (overloaded) return overload ? 'overload' : 'failure';
  return refused ? 'failure' : 'success';
}
