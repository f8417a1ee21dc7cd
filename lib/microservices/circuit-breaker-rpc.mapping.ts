import { RpcException } from '@nestjs/microservices';
import { toErrorPayload } from '../circuit-breaker-transport.mapping.js';

/**
 * The `RpcException` for a breaker error (`CallRejectedError` or
 * `CallTimeoutError`), whose error is a `CircuitBreakerErrorPayload`
 * (`{ status: 'error', code, message, retryAfterMs? }`), or `undefined` for
 * any other value: for a handler or a filter of the application's own.
 *
 * @publicApi
 */
export function toRpcException(
  exception: unknown,
  options: { details?: boolean } = {},
): RpcException | undefined {
  const payload = toErrorPayload(exception, options);
  return payload === undefined ? undefined : new RpcException(payload);
}
