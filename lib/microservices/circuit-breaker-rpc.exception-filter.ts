import { Catch, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';
import { CallTimeoutError, CircuitOpenError } from '../core/index.js';
import { grpcError } from '../circuit-breaker-transport.answers.js';
import type { CircuitBreakerErrorPayload } from '../circuit-breaker-transport.mapping.js';
import { toRpcException } from './circuit-breaker-rpc.mapping.js';

/**
 * Answers a `CircuitOpenError` or a `CallTimeoutError` of a microservice
 * handler with its `RpcException` (see `toRpcException()`): the client's
 * `send()` errors with `{ status: 'error', code: 'CIRCUIT_OPEN' |
 * 'CALL_TIMEOUT', message, retryAfterMs? }` (over gRPC: the status
 * `UNAVAILABLE` or `DEADLINE_EXCEEDED`, the code and `retry-after-ms` in
 * trailing metadata). For a microservice that does not
 * import `CircuitBreakerModule.forRoot({ httpFilter: true })` (whose filter
 * answers every transport alike): `app.useGlobalFilters(new
 * CircuitBreakerRpcExceptionFilter())` or `@UseFilters()`.
 *
 * @publicApi
 */
@Catch(CircuitOpenError, CallTimeoutError)
export class CircuitBreakerRpcExceptionFilter implements RpcExceptionFilter<
  CircuitOpenError | CallTimeoutError
> {
  constructor(private readonly options: { details?: boolean } = {}) {}

  catch(exception: CircuitOpenError | CallTimeoutError, host: ArgumentsHost): Observable<never> {
    const rpc = toRpcException(exception, this.options);
    if (rpc === undefined) return throwError(() => exception);
    const payload = rpc.getError() as CircuitBreakerErrorPayload;
    // As BaseRpcExceptionFilter answers an RpcException: its error is what the client receives (a status over gRPC).
    return throwError(() => grpcError(payload, host) ?? payload);
  }
}
