import { Catch } from '@nestjs/common';
import { CallTimeoutError, CallRejectedError } from '../core/index.js';
import { CircuitBreakerExceptionFilter } from '../circuit-breaker.exception-filter.js';

/**
 * `CircuitBreakerExceptionFilter` built by hand for a resolver, under its 0.1
 * name: a `CallRejectedError` or `CallTimeoutError` fails the field with an
 * error whose `extensions` carry `code` and `retryAfterMs`, and the other
 * fields of the query still resolve. (`toGraphQLError()` gives a `GraphQLError`
 * for a filter of your own.)
 *
 * @deprecated The root entry's `CircuitBreakerExceptionFilter` answers every
 * transport: `forRoot({ httpFilter: true })`,
 * `@UseFilters(CircuitBreakerExceptionFilter)`, or
 * `new CircuitBreakerExceptionFilter(undefined, { details })`. This alias goes
 * before 1.0.
 * @publicApi
 */
@Catch(CallRejectedError, CallTimeoutError)
export class CircuitBreakerGraphQLExceptionFilter extends CircuitBreakerExceptionFilter {
  constructor(options: { details?: boolean } = {}) {
    super(undefined, options);
  }
}
