import { Catch } from '@nestjs/common';
import { CallTimeoutError, CallRejectedError } from '../core/index.js';
import { CircuitBreakerExceptionFilter } from '../circuit-breaker.exception-filter.js';

/**
 * `CircuitBreakerExceptionFilter` built by hand for a microservice, under its
 * 0.1 name: a `CallRejectedError` or `CallTimeoutError` of a handler errors
 * the client's `send()` with `{ status: 'error', code: 'CIRCUIT_OPEN' |
 * 'CALL_TIMEOUT', message, retryAfterMs? }` (over gRPC: the status
 * `UNAVAILABLE` or `DEADLINE_EXCEEDED`, the code and `retry-after-ms` in
 * trailing metadata).
 *
 * @deprecated The root entry's `CircuitBreakerExceptionFilter` answers every
 * transport: `forRoot({ httpFilter: true })`,
 * `app.useGlobalFilters(app.get(CircuitBreakerExceptionFilter))`, or
 * `new CircuitBreakerExceptionFilter(undefined, { details })`. This alias
 * goes before 1.0.
 * @publicApi
 */
@Catch(CallRejectedError, CallTimeoutError)
export class CircuitBreakerRpcExceptionFilter extends CircuitBreakerExceptionFilter {
  constructor(options: { details?: boolean } = {}) {
    super(undefined, options);
  }
}
