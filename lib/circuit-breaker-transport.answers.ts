import type { ArgumentsHost } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';
import {
  breakerErrorExtensions,
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
  /** What `BaseRpcExceptionFilter` returns for an `RpcException`: its error, as the transport sends it to the client. */
  rpc: (payload: CircuitBreakerErrorPayload): Observable<never> => throwError(() => payload),

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
    new BreakerGraphQLError(payload.message, breakerErrorExtensions(payload)),
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
