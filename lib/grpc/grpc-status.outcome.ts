import { status as Status, type StatusObject } from '@grpc/grpc-js';
import type { CallPermit } from '../core/index.js';
import { classifyGrpcError, grpcPauseOf } from '../microservices/grpc-status.classifier.js';
import { GrpcStatusError } from './grpc-status.error.js';

/**
 * Settles `permit` with the status a call of `method` ended with, as the
 * package's gRPC status table (`classifyGrpcError`) reads it: `OK` and the
 * dependency's valid answers (`INVALID_ARGUMENT`, `NOT_FOUND`...) succeed,
 * `CANCELLED` is ignored, the rest fail with a `GrpcStatusError` (overload
 * for `RESOURCE_EXHAUSTED` and an `UNAVAILABLE` that says when to retry), which carries the server's pause from the trailing metadata;
 * the table's outcome goes with it (`permit.fail(error, outcome)`).
 *
 * @internal
 */
export function settleByStatus(
  permit: CallPermit,
  method: string,
  status: StatusObject,
  now: number,
): void {
  if (status.code === Status.OK) {
    permit.succeed(status);
    return;
  }
  const retryAfterMs = grpcPauseOf(status.metadata, now);
  const error = GrpcStatusError.of(method, status, retryAfterMs);
  const outcome = classifyGrpcError(error);
  if (outcome === 'success') permit.succeed(status);
  else if (outcome === 'ignored') permit.release();
  // The table decided: the breaker's `classify` may still overrule it, its default classification does not.
  else permit.fail(error, outcome);
}
