import { Catch, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';
import { CallTimeoutError, CircuitOpenError } from '../core/index.js';
import { toRpcException } from './circuit-breaker-rpc.mapping.js';

/**
 * Answers a `CircuitOpenError` or a `CallTimeoutError` of a microservice
 * handler with its `RpcException` (see `toRpcException()`): the client's
 * `send()` errors with `{ status: 'error', code: 'CIRCUIT_OPEN' |
 * 'CALL_TIMEOUT', message, retryAfterMs? }`. For a microservice that does not
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

  catch(exception: CircuitOpenError | CallTimeoutError, _host: ArgumentsHost): Observable<never> {
    const rpc = toRpcException(exception, this.options);
    // As BaseRpcExceptionFilter answers an RpcException: its error is what the client receives.
    return throwError(() => (rpc === undefined ? exception : rpc.getError()));
  }
}
