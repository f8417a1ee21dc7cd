import type { BreakerState, RejectionReason } from '../state/breaker-state.js';
import { breakerMessages } from './breaker.messages.js';

// A brand survives two copies of this package in one node_modules tree,
// where `instanceof` would not.
const REJECTION_BRAND = Symbol.for('nestjs-circuit-breaker.rejection');

/**
 * The call was not attempted: the breaker rejected it locally. Distinct from
 * every dependency error, so that callers, retry policies and logs can tell
 * "we did not call" from "the dependency failed".
 *
 * `retryAfterMs` is the best estimate of when a call may be admitted:
 * - `open`: until the open duration ends;
 * - `half-open-busy`: until the pending probe must have settled (its timeout
 *   or `halfOpen.maxWaitMs`), an upper bound;
 * - `retry-after`: until the pause the dependency asked for ends;
 * - `throttled`: a nominal 1 s, since shedding is probabilistic;
 * - `isolated`: absent; only `reset()` ends isolation;
 * - `bulkhead-full`: absent (a slot frees when a call settles); its `code` is
 *   `BULKHEAD_FULL`, so that it is never mistaken for an open circuit;
 * - `ramp-up`: until the slow start ends, at most 1 s;
 * - `shed`: absent, as for `bulkhead-full` (a place frees when a request
 *   ends; a pause of every caller would leave the service idle). Only a
 *   concurrency limiter sheds (`breakerName` is the limiter's name, `state` is
 *   `closed`: a limiter has no circuit); its `code` is `LOAD_SHED`.
 *
 * `cause` is the last failure the breaker saw, when there was one.
 *
 * @publicApi
 */
export class CallRejectedError extends Error {
  declare readonly name: 'CallRejectedError';
  /**
   * `CIRCUIT_OPEN`; `BULKHEAD_FULL` for reason `bulkhead-full` (the circuit may well be closed);
   * `LOAD_SHED` for reason `shed` (a concurrency limiter refused it).
   */
  readonly code: RejectionCode;

  constructor(
    readonly breakerName: string,
    readonly state: BreakerState,
    readonly reason: RejectionReason | 'shed',
    readonly retryAfterMs: number | undefined,
    cause?: unknown,
  ) {
    // A rejection is the hot path of an outage: skipping the stack capture makes
    // it several times cheaper, and its stack would only show the breaker anyway.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(
      breakerMessages.rejected(breakerName, reason),
      cause === undefined ? undefined : { cause },
    );
    Error.stackTraceLimit = limit;
    this.code = codeOf(reason);
  }
}

/** The stable code of a refusal, what crosses the wire. @publicApi */
export type RejectionCode = 'CIRCUIT_OPEN' | 'BULKHEAD_FULL' | 'LOAD_SHED';

function codeOf(reason: RejectionReason | 'shed'): RejectionCode {
  if (reason === 'bulkhead-full') return 'BULKHEAD_FULL';
  return reason === 'shed' ? 'LOAD_SHED' : 'CIRCUIT_OPEN';
}
Object.defineProperty(CallRejectedError.prototype, 'name', { value: 'CallRejectedError' });
Object.defineProperty(CallRejectedError.prototype, REJECTION_BRAND, { value: true });
// The breaker's own rejections are built without the Error constructor (see
// createRejection): their message and stack are computed when someone reads them.
Object.defineProperties(CallRejectedError.prototype, {
  message: {
    get(this: CallRejectedError) {
      return breakerMessages.rejected(this.breakerName, this.reason);
    },
    configurable: true,
  },
  stack: {
    get(this: CallRejectedError) {
      return `CallRejectedError: ${this.message}\n    at <rejected by circuit breaker "${this.breakerName}": the call was not attempted>`;
    },
    configurable: true,
  },
});

/**
 * A rejection as the breaker makes one on every call while open: an object of
 * the `CallRejectedError` class without running the Error constructor, so
 * neither a stack nor a message is built unless someone reads it. During an
 * outage this is the hot path; it is several times cheaper than even a
 * stackless `new Error()`.
 *
 * @internal
 */
export function createRejection(
  breakerName: string,
  state: BreakerState,
  reason: RejectionReason | 'shed',
  retryAfterMs: number | undefined,
  cause: unknown,
): CallRejectedError {
  return new Rejection(breakerName, state, reason, retryAfterMs, cause);
}

// A plain constructor sharing CallRejectedError's prototype: `instanceof`
// CallRejectedError and Error hold, and V8 allocates it like any small object.
const Rejection = function (
  this: Record<string, unknown>,
  breakerName: string,
  state: BreakerState,
  reason: RejectionReason | 'shed',
  retryAfterMs: number | undefined,
  cause: unknown,
) {
  this.code = codeOf(reason);
  this.breakerName = breakerName;
  this.state = state;
  this.reason = reason;
  this.retryAfterMs = retryAfterMs;
  this.cause = cause;
} as unknown as new (
  breakerName: string,
  state: BreakerState,
  reason: RejectionReason | 'shed',
  retryAfterMs: number | undefined,
  cause: unknown,
) => CallRejectedError;
Rejection.prototype = CallRejectedError.prototype;

/**
 * The call was attempted but did not settle within `timeoutMs`; its
 * `AbortSignal` has been aborted and a late result is discarded. Counted as a
 * failure.
 *
 * @publicApi
 */
export class CallTimeoutError extends Error {
  declare readonly name: 'CallTimeoutError';
  readonly code = 'CALL_TIMEOUT' as const;

  constructor(
    readonly breakerName: string,
    readonly timeoutMs: number,
    message: string = breakerMessages.timedOut(breakerName, timeoutMs),
  ) {
    super(message);
  }
}
Object.defineProperty(CallTimeoutError.prototype, 'name', { value: 'CallTimeoutError' });

/**
 * A breaker was given an option it cannot work with. Thrown when the breaker is
 * built (at application start-up under Nest), never on a call.
 *
 * @publicApi
 */
export class BreakerConfigError extends Error {
  declare readonly name: 'BreakerConfigError';
  readonly code = 'BREAKER_CONFIG' as const;

  constructor(
    message: string,
    readonly breakerName: string,
    readonly option?: string,
  ) {
    super(message);
  }
}
Object.defineProperty(BreakerConfigError.prototype, 'name', { value: 'BreakerConfigError' });

/**
 * True for a local rejection by any breaker (a `CallRejectedError`, also from
 * another copy of this package). A retry policy should treat it as terminal:
 * retrying an open breaker is the storm the breaker exists to stop.
 *
 * @publicApi
 */
export function isCallRejected(error: unknown): error is CallRejectedError {
  if (typeof error !== 'object' || error === null) return false;
  try {
    return (error as { [REJECTION_BRAND]?: boolean })[REJECTION_BRAND] === true;
  } catch {
    // A Proxy whose traps throw is certainly not one of ours.
    return false;
  }
}

/**
 * The application's own code, run by a breaker (an event listener, a
 * classifier), threw or answered nonsense. Given to `reportError`, never to a
 * caller: the call it observed settled with its own outcome. `cause` is what
 * was thrown.
 *
 * @publicApi
 */
export class BreakerHookError extends Error {
  readonly code = 'CIRCUIT_BREAKER_HOOK_FAILED' as const;

  constructor(message: string, cause: unknown) {
    super(message, cause === undefined ? undefined : { cause });
  }
}
Object.defineProperty(BreakerHookError.prototype, 'name', { value: 'BreakerHookError' });
