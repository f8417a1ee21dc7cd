import { defaultClassifyError, type CallOutcome } from '../core/index.js';

type Loose = Record<string, unknown>;

/**
 * Classifies what a `ClientProxy.send()` / `emit()` call errored with, for a
 * breaker's `classify` option:
 *
 * - a timeout (`TimeoutError` of RxJS `timeout()`), a refused or closed
 *   connection (`ECONNREFUSED`, `Connection closed`), and the server's
 *   `{ status: 'error', message: 'Internal server error' }` for an unexpected
 *   error are failures;
 * - an `RpcException` error carrying an HTTP status (`{ statusCode: 400 }`,
 *   `new RpcException(new BadRequestException().getResponse())`) counts as
 *   that status does over HTTP: a 4xx is the caller's, a success; 5xx and 408
 *   are failures; 429 is `overload`;
 * - a remote breaker's `CIRCUIT_OPEN` payload is `overload` when it says
 *   when to retry (as a 503 with `Retry-After` is), a failure otherwise; a
 *   remote limiter's `LOAD_SHED` is always `overload` (the service is at its
 *   limit, not broken; it asks for no pause);
 *   `CALL_TIMEOUT` is a failure.
 *
 * `overload: false` (a breaker with `overload: false`) counts overloads as failures.
 *
 * @publicApi
 */
export function classifyRpcError(error: unknown, overload = true): CallOutcome {
  if (typeof error === 'object' && error !== null) {
    try {
      const code = (error as Loose).code;
      if (code === 'LOAD_SHED') return overload ? 'overload' : 'failure';
      if (code === 'CIRCUIT_OPEN')
        return overload && typeof (error as Loose).retryAfterMs === 'number'
          ? 'overload'
          : 'failure';
      if (code === 'CALL_TIMEOUT') return 'failure';
    } catch {
      // A payload that cannot be read says nothing: the default classification decides.
    }
  }
  return defaultClassifyError(error, overload);
}
