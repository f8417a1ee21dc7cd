import {
  isCallRejected,
  type CallTimeoutError,
  type CallRejectedError,
  type RejectionReason,
} from './core/index.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import { announcedRetryAfterMs } from './retry-after-header.js';
import { isShed } from './circuit-breaker-http.mapping.js';

/**
 * The payload a rejected or timed-out call answers with outside HTTP: the
 * `RpcException` error of a microservice (what `ClientProxy.send()` errors
 * with), the `data` of a WebSocket `exception` message, and (without
 * `status` and `message`) the `extensions` of a GraphQL error. `status` and
 * `message` are as Nest's own RPC and WebSocket errors have them; `code` is
 * what clients branch on. Stable: fields are only ever added.
 *
 * @publicApi
 */
export interface CircuitBreakerErrorPayload {
  status: 'error';
  /**
   * `CIRCUIT_OPEN`: the call was not attempted; `LOAD_SHED`: a concurrency limiter shed the request (it was not
   * run); `CALL_TIMEOUT`: it did not answer in time.
   */
  code: 'CIRCUIT_OPEN' | 'LOAD_SHED' | 'CALL_TIMEOUT';
  /** Names nothing internal, unless `details`. */
  message: string;
  /** `CIRCUIT_OPEN` and `LOAD_SHED` only, when the breaker knows: how long until a call may be admitted (whole ms, at most a day). */
  retryAfterMs?: number;
  /** With `details: true` only: the breaker's name. */
  breaker?: string;
  /** With `details: true`, `CIRCUIT_OPEN` and `LOAD_SHED` only: why the call was rejected. */
  reason?: RejectionReason | 'shed';
  /** With `details: true`, `CALL_TIMEOUT` only: the deadline it missed. */
  timeoutMs?: number;
}

/**
 * The GraphQL error `extensions` of a rejected or timed-out call: the
 * payload's `code` and `retryAfterMs` (and details), for clients to branch on.
 *
 * @publicApi
 */
export type CircuitBreakerErrorExtensions = Omit<CircuitBreakerErrorPayload, 'status' | 'message'>;

/**
 * The payload for a breaker error (`CallRejectedError` or `CallTimeoutError`),
 * or `undefined` for any other value: what `CircuitBreakerExceptionFilter`
 * answers outside HTTP, for an application's own filter. `details` adds the
 * breaker's name, the reason and the deadline (default: nothing internal).
 *
 * @publicApi
 */
export function toErrorPayload(
  exception: unknown,
  options: { details?: boolean } = {},
): CircuitBreakerErrorPayload | undefined {
  const details = options.details === true;
  if (isCallRejected(exception)) {
    const open: CallRejectedError = exception;
    const retryAfterMs = announcedRetryAfterMs(open.retryAfterMs);
    const shed = isShed(open);
    return {
      status: 'error',
      code: shed ? 'LOAD_SHED' : 'CIRCUIT_OPEN',
      message: details
        ? open.message
        : shed
          ? circuitBreakerMessages.httpOverloaded()
          : circuitBreakerMessages.httpUnavailable(),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(details ? { breaker: open.breakerName, reason: open.reason } : {}),
    };
  }
  if (!isCallTimeout(exception)) return undefined;
  return {
    status: 'error',
    code: 'CALL_TIMEOUT',
    message: details ? exception.message : circuitBreakerMessages.httpTimedOut(),
    ...(details ? { breaker: exception.breakerName, timeoutMs: exception.timeoutMs } : {}),
  };
}

/** The payload without what GraphQL carries elsewhere (`status`, `message`): the error's `extensions`. @publicApi */
export function toGraphQLExtensions(
  payload: CircuitBreakerErrorPayload,
): CircuitBreakerErrorExtensions {
  const { status: _status, message: _message, ...extensions } = payload;
  return extensions;
}

function isCallTimeout(value: unknown): value is CallTimeoutError {
  if (typeof value !== 'object' || value === null) return false;
  try {
    // By code, as a rejection is recognised by its brand: another copy of the package makes other classes.
    return (value as { code?: unknown }).code === 'CALL_TIMEOUT' && value instanceof Error;
  } catch {
    return false;
  }
}
