import type { CallPermit } from '../core/index.js';
import { undiciMessages } from './undici.messages.js';

/**
 * One request through the breaker, whichever of undici's two handler APIs
 * its caller speaks (`BreakerDispatchHandler`, `BreakerLegacyHandler`): its
 * permit, settled exactly once, and what its caller's handler has heard. The
 * functions of this file are the request's life apart from the words of an
 * API: each settles the permit and gives the caller's handler exactly one
 * last word (its error or the end of the response). A handler keeps this
 * state in its own fields (no object besides it on a success) and gives
 * these functions the two things only its API can do.
 *
 * @internal
 */
export interface BreakerRequest {
  readonly permit: CallPermit;
  /** Named only in an error: a family child's name is built when read. */
  readonly breaker: { readonly name: string };
  readonly failureBodyLimit: number;
  /** Whether the caller's handler has had its last word. */
  done: boolean;
  /** Why this request was aborted from this side (the caller, the deadline, a failure body too large). */
  abortReason: Error | null;
  /** A failure's body while it is read for the caller (`FailureBody`); `undefined` otherwise. */
  failureBody: { readonly endHeld: boolean } | undefined;
  /** Aborts undici's request, once undici has started it. */
  abortUpstream(reason: Error): void;
  /** Tells the caller's handler `error` (only through `finish()`: its last word). */
  tellError(error: Error): void;
}

/** The caller's handler hears `error`, unless it has had its last word. @internal */
export function finish(request: BreakerRequest, error: Error): void {
  if (request.done) return;
  request.done = true;
  request.tellError(error);
}

/** The caller gave up (its signal, a fetch abort): not the dependency's fault. @internal */
export function callerAborted(request: BreakerRequest, reason: Error): void {
  if (request.abortReason !== null) return;
  request.abortReason = reason;
  // The ignored event and call-settle carry the caller's reason, as for every client.
  request.permit.release(reason);
  request.abortUpstream(reason);
  // A response undici has finished (its end held here) gets no error from undici: the caller hears its own.
  if (request.failureBody?.endHeld === true) finish(request, reason);
}

/** undici's error: the dependency's failure, or only the caller's news once settled (the headers came). @internal */
export function failed(request: BreakerRequest, error: Error): void {
  if (request.done) return;
  if (isInvalidArgument(error)) request.permit.release();
  else request.permit.fail(error);
  finish(request, error);
}

/** An injected failure (or the end of its latency): counted as the call's failure, and the caller hears it. @internal */
export function injected(request: BreakerRequest, error: Error): void {
  if (request.done) return;
  if (request.abortReason === null) request.permit.fail(error);
  finish(request, request.abortReason ?? error);
}

/** The breaker's deadline passed before the headers (or a probe expired): abort the request itself. @internal */
export function expired(request: BreakerRequest, error: Error): void {
  // The signal also aborts when the caller gives up (the permit is then ignored): only a timeout aborts here.
  if (request.permit.outcome !== 'timeout' || request.abortReason !== null) return;
  // Still queued in undici: the caller hears now, and the request is aborted when undici starts it.
  abortHere(request, error);
}

/** A failure's body went over `failureBodyLimit`: the request is aborted, and the caller hears why. @internal */
export function bodyTooLarge(request: BreakerRequest): void {
  request.failureBody = undefined;
  abortHere(
    request,
    new Error(undiciMessages.failureBodyTooLarge(request.breaker.name, request.failureBodyLimit)),
  );
}

/** The caller's handler threw outside undici's call (given what was held): what undici does then. @internal */
export function handlerThrew(request: BreakerRequest, error: Error): void {
  request.abortReason ??= error;
  request.abortUpstream(error);
  finish(request, error);
}

function abortHere(request: BreakerRequest, error: Error): void {
  request.abortReason = error;
  request.abortUpstream(error);
  finish(request, error);
}

/** undici's own refusal of a malformed request (no origin, a bad header): the caller's mistake. */
function isInvalidArgument(error: Error): boolean {
  return (error as { code?: unknown }).code === 'UND_ERR_INVALID_ARG';
}
