import { GraphQLError } from 'graphql';
import { toGraphQLExtensions, toErrorPayload } from '../circuit-breaker-transport.mapping.js';

/**
 * The `GraphQLError` for a breaker error (`CallRejectedError` or
 * `CallTimeoutError`), whose `extensions` are `{ code: 'CIRCUIT_OPEN' |
 * 'CALL_TIMEOUT', retryAfterMs? }` (see `CircuitBreakerErrorExtensions`), or
 * `undefined` for any other value. Returned or thrown by a resolver, it fails
 * that field only.
 *
 * @publicApi
 */
export function toGraphQLError(
  exception: unknown,
  options: { details?: boolean } = {},
): GraphQLError | undefined {
  const payload = toErrorPayload(exception, options);
  if (payload === undefined) return undefined;
  return new GraphQLError(payload.message, {
    extensions: { ...toGraphQLExtensions(payload) },
    originalError: exception as Error,
  });
}
