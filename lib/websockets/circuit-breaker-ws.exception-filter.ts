import { Catch } from '@nestjs/common';
import { CallTimeoutError, CallRejectedError } from '../core/index.js';
import { CircuitBreakerExceptionFilter } from '../circuit-breaker.exception-filter.js';

/**
 * `CircuitBreakerExceptionFilter` built by hand for a gateway, under its 0.1
 * name: a `CallRejectedError` or `CallTimeoutError` becomes an `exception`
 * message whose data is `{ status: 'error', code: 'CIRCUIT_OPEN' |
 * 'CALL_TIMEOUT', message, retryAfterMs? }`, as for a `WsException`; Nest
 * handles every other error as it does without a filter.
 *
 * @deprecated The root entry's `CircuitBreakerExceptionFilter` answers every
 * transport: `@UseFilters(CircuitBreakerExceptionFilter)` on the gateway
 * (Nest applies no global filter to gateways), or
 * `@UseFilters(new CircuitBreakerExceptionFilter(undefined, { details }))`.
 * This alias goes before 1.0.
 * @publicApi
 */
@Catch(CallRejectedError, CallTimeoutError)
export class CircuitBreakerWsExceptionFilter extends CircuitBreakerExceptionFilter {
  constructor(options: { details?: boolean } = {}) {
    super(undefined, options);
  }
}
