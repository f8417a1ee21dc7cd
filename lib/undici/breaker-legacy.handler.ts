import type { Dispatcher } from 'undici';
import type { CallPermit } from '../core/index.js';
import { bodyTooLarge, callerAborted, failed } from './breaker-request.js';
import { failureBodyAfter, type FailureBody, type FailureBodyReader } from './failure-body.js';
import { dispatchThroughPermit, type PermitDispatch } from './permit-dispatch.js';
import { channel } from 'node:diagnostics_channel';
import { BREAKER_CHANNEL_NAMES } from '../diagnostics/breaker-channels.js';
import { RawResponseHead } from './raw-response-head.js';
import { undiciMessages } from './undici.messages.js';

// A subscriber of settled calls is handed the head and may keep it: then its raw headers (views of the
// socket's buffer) are parsed and let go. A success's head is otherwise parsed only if something reads it.
const settled = channel(BREAKER_CHANNEL_NAMES.callSettle);

type Handler = Dispatcher.DispatchHandler;
type RawHeaders = Buffer[] | string[] | null;
type Trailers = string[] | null;
type Abort = (reason?: Error) => void;

/**
 * One request through the breaker, for a caller's handler of undici's older
 * handler API (`onConnect`, `onHeaders`...), which `fetch` and `request()`
 * give their dispatcher: it is handed to the dispatcher in the same API, so
 * neither undici nor this handler converts the headers or the handler between
 * the two APIs. It settles as `BreakerDispatchHandler` does: once, at the
 * response's headers, on an error before them, when the caller gives up, or
 * at the breaker's deadline, which aborts the request; and the caller's
 * handler hears exactly one last word. What both handlers share is in
 * `breaker-request.ts` and `failure-body.ts`: this class translates it to
 * the older API.
 *
 * @internal
 */
export class BreakerLegacyHandler implements Handler, PermitDispatch, FailureBodyReader<Trailers> {
  private upstreamAbort: Abort | undefined = undefined;
  private callerAbort: Abort | undefined = undefined;
  // The request's state, as the shared functions read and write it (BreakerRequest, FailureBodyReader).
  done = false;
  abortReason: Error | null = null;
  callerPaused = false;
  failureBody: FailureBody<Trailers> | undefined = undefined;
  private dispatcher: Dispatcher | undefined = undefined;
  private request: Dispatcher.DispatchOptions | undefined = undefined;

  constructor(
    readonly permit: CallPermit,
    private readonly handler: Handler,
    readonly breaker: { readonly name: string },
    readonly failureBodyLimit: number,
  ) {}

  /** Dispatches the request to `dispatcher`; the breaker's deadline runs from here. */
  start(dispatcher: Dispatcher, request: Dispatcher.DispatchOptions): boolean {
    this.dispatcher = dispatcher;
    this.request = request;
    return dispatchThroughPermit(this);
  }

  send(): boolean {
    return this.dispatcher!.dispatch(this.request!, this);
  }

  startCaller(): void {
    try {
      this.handler.onConnect?.(this.abortOfCaller());
    } catch (error) {
      this.abort(error as Error);
    }
  }

  abortUpstream(reason: Error): void {
    this.upstreamAbort?.(reason);
  }

  tellError(error: Error): void {
    this.handler.onError?.(error);
  }

  deliverChunk(chunk: Buffer): void {
    if (this.handler.onData?.(chunk) === false) this.callerPaused = true;
  }

  deliverEnd(trailers: Trailers): void {
    // Done once it returned: a handler that throws here hears undici's error next.
    this.handler.onComplete?.(trailers);
    this.done = true;
  }

  /** The abort the caller's handler is given: its own, whatever undici's connection is at the time. */
  private abortOfCaller(): Abort {
    return (this.callerAbort ??= (reason) => this.abort(reason));
  }

  /** The caller gave up (its signal, a fetch abort): not the dependency's fault. */
  private abort(reason: Error | undefined): void {
    if (this.abortReason === null) callerAborted(this, reason ?? new Error(undiciMessages.aborted));
  }

  /** The resume given to a caller of a failure's body: what was held for it, as long as it does not pause again. */
  private resume(): void {
    this.callerPaused = false;
    this.failureBody?.flush();
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
      if (outcome !== 'success') {
        head.detach();
        if ((this.failureBody = failureBodyAfter(outcome, this)) !== undefined)
          return this.failureHeaders(statusCode, headers, statusText);
      } else if (settled.hasSubscribers) head.detach();
    }
    return this.handler.onHeaders?.(statusCode, headers, resume, statusText) !== false;
  }

  onData(chunk: Buffer): boolean {
    if (this.done) return true;
    if (this.failureBody === undefined) return this.handler.onData?.(chunk) !== false;
    if (!this.failureBody.take(chunk)) bodyTooLarge(this);
    return true;
  }

  onComplete(trailers: Trailers): void {
    if (this.done || this.failureBody?.holds(trailers) === true) return;
    this.deliverEnd(trailers);
  }

  onError(error: Error): void {
    // Settled already when the caller gave up or the headers came: then this is only the caller's news.
    failed(this, error);
  }

  /** A failure's headers: its body keeps coming, held here for a paused caller (it must not hold the connection). */
  private failureHeaders(statusCode: number, headers: Buffer[], statusText: string): boolean {
    if (this.handler.onHeaders?.(statusCode, headers, () => this.resume(), statusText) === false)
      this.callerPaused = true;
    return true;
  }
}
