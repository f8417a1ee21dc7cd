import type { Dispatcher } from 'undici';
import type { CallPermit } from '../core/index.js';
import { isInvalidArgument } from './breaker-dispatch.handler.js';
import { dispatchThroughPermit, type PermitDispatch } from './permit-dispatch.js';
import { RawResponseHead } from './raw-response-head.js';
import { undiciMessages } from './undici.messages.js';

type Handler = Dispatcher.DispatchHandler;
type RawHeaders = Buffer[] | string[] | null;
type Abort = (reason?: Error) => void;

/**
 * One request through the breaker, for a caller's handler of undici's older
 * handler API (`onConnect`, `onHeaders`...), which `fetch` and `request()`
 * give their dispatcher: it is handed to the dispatcher in the same API, so
 * neither undici nor this handler converts the headers or the handler between
 * the two APIs. It settles as `BreakerDispatchHandler` does: once, at the
 * response's headers, on an error before them, when the caller gives up, or
 * at the breaker's deadline, which aborts the request; and the caller's
 * handler hears exactly one last word.
 *
 * @internal
 */
export class BreakerLegacyHandler implements Handler, PermitDispatch {
  private upstreamAbort: Abort | undefined = undefined;
  private callerAbort: Abort | undefined = undefined;
  /** Whether the caller's handler has had its last word. */
  private done = false;
  /** Why this request was aborted from this side (the caller, the deadline, a failure body too large). */
  private abortReason: Error | null = null;
  private callerPaused = false;
  /** While a failure's body is read for the caller: the bytes it may still take; -1 otherwise. */
  private bodyBudget = -1;
  /** What of a failure's body came while the caller was paused: given on resume, in order. */
  private held: Buffer[] | undefined = undefined;
  /** The end (its trailers) of a failure's response that came while its body was held. */
  private heldEnd: string[] | null | undefined = undefined;
  private flushing = false;

  constructor(
    readonly permit: CallPermit,
    private readonly handler: Handler,
    /** Named only in an error: a family child's name is built when read. */
    private readonly breaker: { readonly name: string },
    private readonly failureBodyLimit: number,
  ) {}

  /** Dispatches the request to `dispatcher`; the breaker's deadline runs from here. */
  start(dispatcher: Dispatcher, request: Dispatcher.DispatchOptions): boolean {
    return dispatchThroughPermit(this, () => dispatcher.dispatch(request, this));
  }

  injected(error: Error): void {
    if (this.done) return;
    if (this.abortReason === null) this.permit.fail(error);
    this.finish(this.abortReason ?? error);
  }

  release(): void {
    this.permit.release();
  }

  startCaller(): void {
    try {
      this.handler.onConnect?.(this.abortOfCaller());
    } catch (error) {
      this.abort(error as Error);
    }
  }

  /** The abort the caller's handler is given: its own, whatever undici's connection is at the time. */
  private abortOfCaller(): Abort {
    return (this.callerAbort ??= (reason) => this.abort(reason));
  }

  /** The caller gave up (its signal, a fetch abort): not the dependency's fault. */
  private abort(reason: Error | undefined): void {
    if (this.abortReason !== null) return;
    this.abortReason = reason ?? new Error(undiciMessages.aborted);
    this.permit.release();
    this.upstreamAbort?.(this.abortReason);
    // A response undici has finished (its end held here) gets no error from undici: the caller hears its own.
    if (this.heldEnd !== undefined) this.finish(this.abortReason);
  }

  // The handler undici calls.

  onConnect(abort: Abort): void {
    this.upstreamAbort = abort;
    // Aborted while undici still queued it: by the caller, or at the deadline (the caller already has its error).
    if (this.abortReason !== null) return abort(this.abortReason);
    // Told already, before a fault's latency: the abort it holds reaches the connection undici gave now.
    if (this.callerAbort !== undefined) return;
    try {
      this.handler.onConnect?.(this.abortOfCaller());
    } catch (error) {
      this.permit.release();
      throw error;
    }
  }

  onResponseStarted(): void {
    this.handler.onResponseStarted?.();
  }

  onBodySent(chunkSize: number, totalBytesSent: number): void {
    this.handler.onBodySent?.(chunkSize, totalBytesSent);
  }

  /** The request's body is all sent: undici's older API tells handlers that have this hook. */
  onRequestSent(): void {
    (this.handler as { onRequestSent?: () => void }).onRequestSent?.();
  }

  onUpgrade(
    statusCode: number,
    headers: RawHeaders,
    socket: Parameters<NonNullable<Handler['onUpgrade']>>[2],
  ): void {
    if (this.done) {
      socket.destroy();
      return;
    }
    this.permit.succeed(new RawResponseHead(statusCode, headers, undefined));
    this.done = true;
    this.handler.onUpgrade?.(statusCode, headers, socket);
  }

  onHeaders(
    statusCode: number,
    headers: Buffer[],
    resume: () => void,
    statusText: string,
  ): boolean {
    if (this.done) return true;
    // An informational answer (100 Continue) is not the response yet.
    if (statusCode >= 200) {
      const head = new RawResponseHead(statusCode, headers, statusText);
      const outcome = this.permit.succeed(head);
      if (outcome !== 'success') head.detach();
      if ((outcome === 'failure' || outcome === 'overload') && this.failureBodyLimit > 0) {
        this.bodyBudget = this.failureBodyLimit;
        // A failure's body keeps coming, held here for a paused caller: an unread error body must not hold the connection.
        if (
          this.handler.onHeaders?.(statusCode, headers, () => this.resume(), statusText) === false
        )
          this.callerPaused = true;
        return true;
      }
    }
    return this.handler.onHeaders?.(statusCode, headers, resume, statusText) !== false;
  }

  onData(chunk: Buffer): boolean {
    if (this.done) return true;
    if (this.bodyBudget < 0) return this.handler.onData?.(chunk) !== false;
    this.bodyBudget -= chunk.length;
    if (this.bodyBudget < 0) {
      const error = new Error(
        undiciMessages.failureBodyTooLarge(this.breaker.name, this.failureBodyLimit),
      );
      this.abortReason = error;
      this.upstreamAbort?.(error);
      this.finish(error);
      return true;
    }
    // A paused caller hears nothing until it resumes: held for it.
    if (this.held !== undefined || this.callerPaused) (this.held ??= []).push(chunk);
    else if (this.handler.onData?.(chunk) === false) this.callerPaused = true;
    return true;
  }

  onComplete(trailers: string[] | null): void {
    if (this.done) return;
    if (this.held !== undefined || (this.bodyBudget >= 0 && this.callerPaused)) {
      this.held ??= [];
      this.heldEnd = trailers;
      return;
    }
    // Done once it returned: a handler that throws here hears undici's error next.
    this.handler.onComplete?.(trailers);
    this.done = true;
  }

  onError(error: Error): void {
    if (this.done) return;
    // Settled already when the caller gave up or the headers came: then this is only the caller's news.
    if (isInvalidArgument(error)) this.permit.release();
    else this.permit.fail(error);
    this.finish(error);
  }

  onDeadline(error: Error): void {
    // The signal also aborts when the caller gives up (the permit is then ignored): only a timeout aborts here.
    if (this.permit.outcome !== 'timeout' || this.abortReason !== null) return;
    this.abortReason = error;
    this.upstreamAbort?.(error);
    // Still queued in undici: the caller hears now, and the request is aborted when undici starts it.
    this.finish(error);
  }

  /** The resume given to a caller of a failure's body: what was held for it, as long as it does not pause again. */
  private resume(): void {
    this.callerPaused = false;
    if (this.held === undefined || this.flushing) return;
    this.flushing = true;
    try {
      this.deliverHeld();
    } catch (error) {
      // What undici does when a handler throws: the request is aborted and the handler hears the error.
      this.abortReason ??= error as Error;
      this.upstreamAbort?.(error as Error);
      this.finish(error as Error);
    } finally {
      this.flushing = false;
    }
  }

  private deliverHeld(): void {
    const held = this.held!;
    while (held.length > 0 && !this.callerPaused && !this.done)
      if (this.handler.onData?.(held.shift()!) === false) this.callerPaused = true;
    if (held.length > 0 || this.callerPaused || this.done) return;
    this.held = undefined;
    const trailers = this.heldEnd;
    if (trailers === undefined) return;
    this.heldEnd = undefined;
    this.handler.onComplete?.(trailers);
    this.done = true;
  }

  private finish(error: Error): void {
    if (this.done) return;
    this.done = true;
    this.handler.onError?.(error);
  }
}
