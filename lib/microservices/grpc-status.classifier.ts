import type { CallOutcome } from '../core/index.js';
import { retryAfterFromHeaders, retryAfterOf } from '../core/classify/classify.js';
import { classifyRpcError } from './rpc-error.classifier.js';

/**
 * The outcome of each gRPC status code (index = code), as HTTP statuses are
 * classified: the codes that say the server could not do its job fail; those
 * that answer the caller (a bad argument, a missing entity, a refused
 * permission) are the dependency doing its job. `CANCELLED` is most often the
 * caller's own cancellation: ignored.
 */
const GRPC_OUTCOMES: readonly (CallOutcome | 'overload-or-failure')[] = [
  'success', //  0 OK
  'ignored', //  1 CANCELLED
  'failure', //  2 UNKNOWN
  'success', //  3 INVALID_ARGUMENT
  'failure', //  4 DEADLINE_EXCEEDED
  'success', //  5 NOT_FOUND
  'success', //  6 ALREADY_EXISTS
  'success', //  7 PERMISSION_DENIED
  'overload-or-failure', //  8 RESOURCE_EXHAUSTED
  'success', //  9 FAILED_PRECONDITION
  'success', // 10 ABORTED
  'success', // 11 OUT_OF_RANGE
  'failure', // 12 UNIMPLEMENTED
  'failure', // 13 INTERNAL
  'failure', // 14 UNAVAILABLE
  'failure', // 15 DATA_LOSS
  'success', // 16 UNAUTHENTICATED
];

/**
 * Classifies a gRPC client error (`ClientGrpc`, `@grpc/grpc-js`'s
 * `ServiceError`: a numeric `code` with `details` or `metadata`), for a
 * breaker's `classify` option: `UNAVAILABLE`, `DEADLINE_EXCEEDED`,
 * `INTERNAL`, `UNKNOWN`, `UNIMPLEMENTED` and `DATA_LOSS` fail;
 * `RESOURCE_EXHAUSTED` is `overload` (a failure with `overload: false`), and
 * so is an `UNAVAILABLE` that says when to retry (`grpc-retry-pushback-ms`,
 * `retry-after-ms` or another pause hint in its trailing metadata, or a
 * `retryAfterMs` on the error), as a 503 with `Retry-After` is;
 * `INVALID_ARGUMENT`, `NOT_FOUND`, `ALREADY_EXISTS`, `PERMISSION_DENIED`,
 * `UNAUTHENTICATED`, `FAILED_PRECONDITION`, `ABORTED` and `OUT_OF_RANGE` are
 * the dependency's valid answers (success); `CANCELLED` is ignored. Any other
 * error is classified as `classifyRpcError()` does.
 *
 * @publicApi
 */
export function classifyGrpcError(error: unknown, overload = true): CallOutcome {
  const code = grpcCodeOf(error);
  if (code === undefined) return classifyRpcError(error, overload);
  const outcome = GRPC_OUTCOMES[code]!;
  if (outcome === 'overload-or-failure' || (code === UNAVAILABLE && pauseHinted(error)))
    return overload ? 'overload' : 'failure';
  return outcome;
}

const UNAVAILABLE = 14;

/**
 * Whether an `UNAVAILABLE` says when to retry, as a 503 with `Retry-After`
 * does: a `retryAfterMs` on the error (`GrpcStatusError`), or a pause hint in
 * its trailing metadata (`grpc-retry-pushback-ms`, `retry-after-ms`, which a
 * remote breaker of this package sends, and the other hints `retryAfterOf()`
 * reads), or a remote limiter's `circuit-breaker-code: LOAD_SHED`. Then the
 * server is shedding load: back off, rather than open.
 */
function pauseHinted(error: unknown): boolean {
  if (retryAfterOf(error, 0) !== undefined) return true;
  try {
    const metadata = (error as { metadata?: unknown }).metadata;
    return grpcPauseOf(metadata, 0) !== undefined || shedBy(metadata);
  } catch {
    return false;
  }
}

/** Whether trailing metadata says a remote concurrency limiter shed the call (`circuit-breaker-code: LOAD_SHED`). */
function shedBy(metadata: unknown): boolean {
  if (typeof metadata !== 'object' || metadata === null) return false;
  const getMap = (metadata as { getMap?: unknown }).getMap;
  const map: unknown = typeof getMap === 'function' ? getMap.call(metadata) : metadata;
  return (
    typeof map === 'object' &&
    map !== null &&
    (map as Record<string, unknown>)['circuit-breaker-code'] === 'LOAD_SHED'
  );
}

/**
 * The pause gRPC trailing metadata asks for, in milliseconds from `now`:
 * `grpc-retry-pushback-ms`, which gRPC servers send for the client's retry
 * policy (gRFC A6: milliseconds; a negative or unreadable value is no pause),
 * then the HTTP hints `retryAfterOf()` reads (`retry-after-ms`,
 * `x-ms-retry-after-ms`, `retry-after`, `ratelimit`...), all read by the one
 * parser of the engine. `metadata` is grpc-js `Metadata` (its `getMap()`) or
 * a plain object of keys; `undefined` for anything else.
 *
 * @internal
 */
export function grpcPauseOf(metadata: unknown, now: number): number | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const getMap = (metadata as { getMap?: unknown }).getMap;
  const map: unknown = typeof getMap === 'function' ? getMap.call(metadata) : metadata;
  if (typeof map !== 'object' || map === null) return undefined;
  const pushback = (map as Record<string, unknown>)['grpc-retry-pushback-ms'];
  return (
    (typeof pushback === 'string'
      ? retryAfterFromHeaders({ 'retry-after-ms': pushback }, now)
      : undefined) ?? retryAfterFromHeaders(map, now)
  );
}

/** The gRPC status code of an error shaped as grpc-js makes them, or `undefined`. */
function grpcCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  try {
    const { code, details, metadata } = error as Record<string, unknown>;
    if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > 16)
      return undefined;
    // A numeric code alone is too common (database drivers use them): grpc-js errors carry details or metadata.
    return typeof details === 'string' || (typeof metadata === 'object' && metadata !== null)
      ? code
      : undefined;
  } catch {
    return undefined;
  }
}
