import type { Dispatcher } from 'undici';
import type { CallPermit } from '../core/index.js';
import type { UndiciResponseHead } from './undici-circuit-breaker-options.interface.js';
import { bodyTooLarge, callerAborted, failed } from './breaker-request.js';
import { failureBodyAfter, type FailureBody, type FailureBodyReader } from './failure-body.js';
import { dispatchThroughPermit, type PermitDispatch } from './permit-dispatch.js';

type Controller = Dispatcher.DispatchController;
type Handler = Dispatcher.DispatchHandler;
type Headers = UndiciResponseHead['headers'];

/**
 * One request through the breaker: the handler undici calls, and the
 * controller the caller's handler is given. It settles its permit exactly
 * once: at the response's headers (classified from status and headers), on
 * an error before them, when the caller gives up (`ignored`), or at the
 * breaker's deadline, which aborts the request. The caller's handler hears
 * exactly one last word (its error or the end of the response). What both
 * handlers share is in `breaker-request.ts` and `failure-body.ts`: this class
 * translates it to undici's newer handler API.
 *
 * @internal
 */
export class BreakerDispatchHandler
  implements Handler, Controller, PermitDispatch, FailureBodyReader<Headers>
{
  private upstream: Controller | undefined = undefined;
  // The request's state, as the shared functions read and write it (BreakerRequest, FailureBodyReader).
  done = false;
  abortReason: Error | null = null;
  callerPaused = false;
  failureBody: FailureBody<Headers> | undefined = undefined;
  /** Whether the caller's handler was started already, before a fault's latency. */
  private callerStarted = false;
  private dispatch: Dispatcher.Dispatch | undefined = undefined;
  private request: Dispatcher.DispatchOptions | undefined = undefined;

  constructor(
    readonly permit: CallPermit,
    private readonly handler: Handler,
    readonly breaker: { readonly name: string },
    readonly failureBodyLimit: number,
  ) {}

  /** Dispatches the request; the breaker's deadline runs from here. */
  start(dispatch: Dispatcher.Dispatch, request: Dispatcher.DispatchOptions): boolean {
    this.dispatch = dispatch;
    this.request = request;
    return dispatchThroughPermit(this);
  }

  send(): boolean {
    return this.dispatch!(this.request!, this);
  }

  startCaller(): void {
    this.callerStarted = true;
    try {
      this.handler.onRequestStart?.(this, undefined);
    } catch (error) {
      this.abort(error as Error);
    }
  }

  abortUpstream(reason: Error): void {
    this.upstream?.abort(reason);
  }

  tellError(error: Error): void {
    this.handler.onResponseError?.(this, error);
  }

  deliverChunk(chunk: Buffer): void {
    this.handler.onResponseData?.(this, chunk);
  }

  deliverEnd(trailers: Headers): void {
    // Done once it returned: a handler that throws here (undici's retry does, to retry) hears undici's error next.
    this.handler.onResponseEnd?.(this, trailers);
    this.done = true;
  }

  // The controller the caller's handler is given.

  get aborted(): boolean {
    return this.abortReason !== null || this.upstream?.aborted === true;
  }

  get paused(): boolean {
    return this.callerPaused;
  }

  get reason(): Error | null {
    return this.abortReason ?? this.upstream?.reason ?? null;
  }

  /** The caller gave up (its signal, a fetch abort): not the dependency's fault. */
  abort(reason: Error): void {
    callerAborted(this, reason);
  }

  pause(): void {
    this.callerPaused = true;
    // A failure's body keeps coming, held here for the caller: an unread error body must not hold the connection.
    if (this.failureBody === undefined) this.upstream?.pause();
  }

  resume(): void {
    this.callerPaused = false;
    this.failureBody?.flush();
    this.upstream?.resume();
  }

  // The handler undici calls.

  onRequestStart(controller: Controller, context: unknown): void {
    this.upstream = controller;
    // Aborted while undici still queued it: by the caller, or at the deadline (the caller already has its error).
    if (this.abortReason !== null) return controller.abort(this.abortReason);
    // Started already, before a fault's latency: this controller reaches the one undici gave now.
    if (this.callerStarted) return;
    try {
      this.handler.onRequestStart?.(this, context);
    } catch (error) {
      this.permit.release();
      throw error;
    }
  }

  onRequestUpgrade(
    controller: Controller,
    statusCode: number,
    headers: Headers,
    socket: Parameters<NonNullable<Handler['onRequestUpgrade']>>[3],
  ): void {
    if (this.done) {
      socket.destroy();
      return;
    }
    this.permit.succeed(headOf(statusCode, headers, undefined));
    this.done = true;
    this.handler.onRequestUpgrade?.(this, statusCode, headers, socket);
  }

  onResponseStart(
    controller: Controller,
    statusCode: number,
    headers: Headers,
    statusMessage?: string,
  ): void {
    if (this.done) return;
    // An informational answer (100 Continue) is not the response yet.
    if (statusCode >= 200) {
      const outcome = this.permit.succeed(headOf(statusCode, headers, statusMessage));
      if (outcome !== 'success') this.failureBody = failureBodyAfter(outcome, this);
    }
    this.handler.onResponseStart?.(this, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.done) return;
    if (this.failureBody === undefined) this.deliverChunk(chunk);
    else if (!this.failureBody.take(chunk)) bodyTooLarge(this);
  }

  onResponseEnd(controller: Controller, trailers: Headers): void {
    if (this.done || this.failureBody?.holds(trailers) === true) return;
    this.deliverEnd(trailers);
  }

  onResponseError(controller: Controller, error: Error): void {
    // Settled already when the caller gave up or the headers came: then this is only the caller's news.
    failed(this, error);
  }
}

function headOf(
  status: number,
  headers: Headers,
  statusText: string | undefined,
): UndiciResponseHead {
  return { status, statusText, headers };
}
