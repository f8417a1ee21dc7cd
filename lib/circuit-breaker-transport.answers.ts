import type { ArgumentsHost } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';
import {
  toGraphQLExtensions,
  type CircuitBreakerErrorExtensions,
  type CircuitBreakerErrorPayload,
} from './circuit-breaker-transport.mapping.js';

/**
 * How the exception filter answers outside HTTP, without importing a
 * transport's package (the root entry never reaches an optional peer): each
 * answer is what that transport's own exception handling does with its
 * exception class.
 *
 * @internal
 */
export const transportAnswers = {
  /**
   * What `BaseRpcExceptionFilter` returns for an `RpcException`: its error,
   * as the transport sends it to the client. gRPC needs a numeric status:
   * there the error is `UNAVAILABLE` or `DEADLINE_EXCEEDED` (see `grpcError`).
   */
  rpc: (payload: CircuitBreakerErrorPayload, host: ArgumentsHost): Observable<never> =>
    throwError(() => grpcError(payload, host) ?? payload),

  /** What `BaseWsExceptionFilter` does with a `WsException`: an `exception` message to the client. */
  ws: (payload: CircuitBreakerErrorPayload, host: ArgumentsHost): true => {
    const client = host.switchToWs().getClient<{
      readyState?: unknown;
      send?: (data: string) => void;
      emit?: (event: string, data: unknown) => void;
    }>();
    // A native WebSocket (ws) is an EventEmitter too, whose emit() only dispatches locally.
    if (typeof client.readyState === 'number' && typeof client.send === 'function')
      client.send(JSON.stringify({ event: 'exception', data: payload }));
    else client.emit?.('exception', payload);
    return true;
  },

  /**
   * A resolver that returns an Error fails its field only: graphql-js takes
   * the `extensions` of the error it wraps, so the response carries the code.
   */
  graphql: (payload: CircuitBreakerErrorPayload): BreakerGraphQLError =>
    new BreakerGraphQLError(payload.message, toGraphQLExtensions(payload)),
};

/** The error a resolver's field fails with: graphql-js copies its `extensions` into the response. @internal */
export class BreakerGraphQLError extends Error {
  constructor(
    message: string,
    readonly extensions: CircuitBreakerErrorExtensions,
  ) {
    super(message);
  }
}
Object.defineProperty(BreakerGraphQLError.prototype, 'name', { value: 'CircuitBreakerError' });

/** The gRPC status codes a breaker error answers with. */
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/** What grpc-js sends for an error: the status, its details, and trailing metadata. @internal */
export interface BreakerGrpcError {
  code: number;
  message: string;
  details: string;
  metadata?: unknown;
}

/**
 * For a gRPC handler (its RPC context is the call's grpc-js `Metadata`), the
 * error grpc-js can send: `UNAVAILABLE` for `CIRCUIT_OPEN` and `LOAD_SHED` (clients
 * retry it later, as they should), `DEADLINE_EXCEEDED` for `CALL_TIMEOUT`, with the
 * payload's code and `retryAfterMs` in trailing metadata
 * (`circuit-breaker-code`, `retry-after-ms`). `undefined` for other RPC
 * transports. The metadata is made with the request metadata's own class, so
 * that grpc-js is never imported.
 *
 * @internal
 */
export function grpcError(
  payload: CircuitBreakerErrorPayload,
  host: ArgumentsHost,
): BreakerGrpcError | undefined {
  let context: unknown;
  try {
    context = host.switchToRpc().getContext();
  } catch {
    return undefined;
  }
  if (!isGrpcMetadata(context)) return undefined;
  const error: BreakerGrpcError = {
    code: payload.code === 'CALL_TIMEOUT' ? GRPC_DEADLINE_EXCEEDED : GRPC_UNAVAILABLE,
    message: payload.message,
    details: payload.message,
  };
  try {
    const metadata = new (context.constructor as new () => GrpcMetadataLike)();
    metadata.set('circuit-breaker-code', payload.code);
    if (payload.retryAfterMs !== undefined)
      metadata.set('retry-after-ms', String(payload.retryAfterMs));
    error.metadata = metadata;
  } catch {
    // Without metadata the status still says what happened.
  }
  return error;
}

interface GrpcMetadataLike {
  set(key: string, value: string): void;
  getMap(): unknown;
}

function isGrpcMetadata(value: unknown): value is GrpcMetadataLike {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<GrpcMetadataLike> & { internalRepr?: unknown };
  return (
    typeof candidate.getMap === 'function' &&
    typeof candidate.set === 'function' &&
    candidate.internalRepr instanceof Map
  );
}
