import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { GraphQLError } from 'graphql';
import { CallTimeoutError, CircuitOpenError } from '../core/index.js';
import { toGraphQLError } from './circuit-breaker-graphql.mapping.js';

/**
 * A resolver's exception filter (`@UseFilters()` on a resolver, or
 * `app.useGlobalFilters()`): a `CircuitOpenError` or `CallTimeoutError` fails
 * the field with its `GraphQLError` (see `toGraphQLError()`), and the other
 * fields of the query still resolve. (The module's filter,
 * `forRoot({ httpFilter: true })`, answers resolvers alike.)
 *
 * @publicApi
 */
@Catch(CircuitOpenError, CallTimeoutError)
export class CircuitBreakerGraphQLExceptionFilter implements ExceptionFilter<
  CircuitOpenError | CallTimeoutError
> {
  constructor(private readonly options: { details?: boolean } = {}) {}

  catch(exception: CircuitOpenError | CallTimeoutError, _host: ArgumentsHost): GraphQLError {
    return toGraphQLError(exception, this.options)!;
  }
}
