import { WsException } from '@nestjs/websockets';
import { toErrorPayload } from '../circuit-breaker-transport.mapping.js';

/**
 * The `WsException` for a breaker error (`CallRejectedError` or
 * `CallTimeoutError`), whose error is a `CircuitBreakerErrorPayload`
 * (`{ status: 'error', code, message, retryAfterMs? }`), or `undefined` for
 * any other value.
 *
 * @publicApi
 */
export function toWsException(
  exception: unknown,
  options: { details?: boolean } = {},
): WsException | undefined {
  const payload = toErrorPayload(exception, options);
  return payload === undefined ? undefined : new WsException(payload);
}
