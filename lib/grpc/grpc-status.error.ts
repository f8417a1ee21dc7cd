import type { Metadata, StatusObject } from '@grpc/grpc-js';

/**
 * What a breaker counts for a gRPC call that ended with a status other than
 * `OK` and that the status table counts against the dependency: the status
 * (`code`, `details`, trailing `metadata`), the method path, and
 * `retryAfterMs`, the pause the server asked for in its trailing metadata
 * (`grpc-retry-pushback-ms`, gRPC's own, or `retry-after-ms` and the other
 * hints `retryAfterOf()` reads). It is what the breaker's `classify`, its
 * `failure` events and its last failure see; the caller still gets grpc-js's
 * own `ServiceError`. Whether it counts as a failure or an overload is
 * decided by the status table, and given to the breaker with the error
 * (`permit.fail(error, outcome)`).
 *
 * @publicApi
 */
export class GrpcStatusError extends Error {
  declare readonly name: 'GrpcStatusError';

  constructor(
    readonly method: string,
    readonly code: number,
    readonly details: string,
    readonly metadata: Metadata,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`${method} ended with gRPC status ${code}: ${details}`);
  }

  /** @internal The error for a status of `method`. */
  static of(
    method: string,
    status: StatusObject,
    retryAfterMs: number | undefined,
  ): GrpcStatusError {
    return new GrpcStatusError(method, status.code, status.details, status.metadata, retryAfterMs);
  }
}
Object.defineProperty(GrpcStatusError.prototype, 'name', { value: 'GrpcStatusError' });
