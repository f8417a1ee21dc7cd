import type { Dispatcher } from 'undici';
import type { CallPermit } from '../core/index.js';
import type { UndiciResponseHead } from './undici-circuit-breaker-options.interface.js';
import { dispatchThroughPermit, type PermitDispatch } from './permit-dispatch.js';
import { undiciMessages } from './undici.messages.js';

type Controller = Dispatcher.DispatchController;
type Handler = Dispatcher.DispatchHandler;
type Headers = UndiciResponseHead['headers'];

/**
 * One request through the breaker: the handler undici calls, and the
 * controller the caller's handler is given. It settles its permit exactly
 * once: at the response's headers (classified from status and headers), on
 * an error before them, when the caller gives up (`ignored`), or at the
 * breaker's deadline, which aborts the request. The caller's handler hears
 * exactly one last word (its error or the end of the response).
 *
 * @internal
 */
export class BreakerDispatchHandler implements Handler, Controller, PermitDispatch {
  private upstream: Controller | undefined = undefined;
  /** Whether the caller's handler has had its last word. */
  private done = false;
  /** Why this request was aborted from this side (the caller, the deadline, a failure body too large). */
  private abortReason: Error | null = null;
  private callerPaused = false;
  /** While a failure's body is read for the caller: the bytes it may still take; -1 otherwise. */
  private bodyBudget = -1;
  /** What of a failure's body came while the caller was paused: given on resume, in order. */
  private held: Buffer[] | undefined = undefined;
  /** The end of a failure's response that came while its body was held. */
  private heldEnd: Headers | undefined = undefined;
  private flushing = false;
  /** Whether the caller's handler was started already, before a fault's latency. */
  private callerStarted = false;

  constructor(
    readonly permit: CallPermit,
    private readonly handler: Handler,
    /** Named only in an error: a family child's name is built when read. */
    private readonly breaker: { readonly name: string },
    private readonly failureBodyLimit: number,
  ) {}

  /** Dispatches the request; the breaker's deadline runs from here. */
  start(dispatch: Dispatcher.Dispatch, request: Dispatcher.DispatchOptions): boolean {
    return dispatchThroughPermit(this, () => dispatch(request, this));
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
    this.callerStarted = true;
    try {
      this.handler.onRequestStart?.(this, undefined);
    } catch (error) {
      this.abort(error as Error);
    }
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
    if (this.abortReason !== null) return;
    this.abortReason = reason;
    this.permit.release();
    this.upstream?.abort(reason);
    // A response undici has finished (its end held here) gets no error from undici: the caller hears its own.
    if (this.heldEnd !== undefined) this.finish(reason);
  }

  pause(): void {
    this.callerPaused = true;
    // A failure's body keeps coming, held here for the caller: an unread error body must not hold the connection.
    if (this.bodyBudget < 0) this.upstream?.pause();
  }

  resume(): void {
    this.callerPaused = false;
    if (this.held !== undefined) this.flush();
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
      if ((outcome === 'failure' || outcome === 'overload') && this.failureBodyLimit > 0)
        this.bodyBudget = this.failureBodyLimit;
    }
    this.handler.onResponseStart?.(this, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.done) return;
    if (this.bodyBudget >= 0) {
      this.bodyBudget -= chunk.length;
      if (this.bodyBudget < 0) {
        const error = new Error(
          undiciMessages.failureBodyTooLarge(this.breaker.name, this.failureBodyLimit),
        );
        this.abortReason = error;
        controller.abort(error);
        this.finish(error);
        return;
      }
      // A paused caller hears nothing until it resumes (undici's retry decides meanwhile): held for it.
      if (this.held !== undefined || this.callerPaused) {
        (this.held ??= []).push(chunk);
        return;
      }
    }
    this.handler.onResponseData?.(this, chunk);
  }

  onResponseEnd(controller: Controller, trailers: Headers): void {
    if (this.done) return;
    if (this.held !== undefined || (this.bodyBudget >= 0 && this.callerPaused)) {
      this.held ??= [];
      this.heldEnd = trailers;
      return;
    }
    // Done once it returned: a handler that throws here (undici's retry does, to retry) hears undici's error next.
    this.handler.onResponseEnd?.(this, trailers);
    this.done = true;
  }

  onResponseError(controller: Controller, error: Error): void {
    if (this.done) return;
    // Settled already when the caller gave up or the headers came: then this is only the caller's news.
    if (isInvalidArgument(error)) this.permit.release();
    else this.permit.fail(error);
    this.finish(error);
  }

  /** The breaker's deadline passed before the headers (or a probe expired): abort the request itself. */
  onDeadline(error: Error): void {
    // The signal also aborts when the caller gives up (the permit is then ignored): only a timeout aborts here.
    if (this.permit.outcome !== 'timeout' || this.abortReason !== null) return;
    this.abortReason = error;
    this.upstream?.abort(error);
    // Still queued in undici: the caller hears now, and the request is aborted when undici starts it.
    this.finish(error);
  }

  /** Gives a resumed caller what was held for it, as long as it does not pause again. */
  private flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    try {
      this.deliverHeld();
    } catch (error) {
      // What undici does when a handler throws: the request is aborted and the handler hears the error.
      this.abortReason ??= error as Error;
      this.upstream?.abort(error as Error);
      this.finish(error as Error);
    } finally {
      this.flushing = false;
    }
  }

  private deliverHeld(): void {
    const held = this.held!;
    while (held.length > 0 && !this.callerPaused && !this.done)
      this.handler.onResponseData?.(this, held.shift()!);
    if (held.length > 0 || this.callerPaused || this.done) return;
    this.held = undefined;
    const trailers = this.heldEnd;
    if (trailers === undefined) return;
    this.heldEnd = undefined;
    this.handler.onResponseEnd?.(this, trailers);
    this.done = true;
  }

  private finish(error: Error): void {
    if (this.done) return;
    this.done = true;
    this.handler.onResponseError?.(this, error);
  }
}

function headOf(
  status: number,
  headers: Headers,
  statusText: string | undefined,
): UndiciResponseHead {
  return { status, statusText, headers };
}

/** undici's own refusal of a malformed request (no origin, a bad header): the caller's mistake. */
export function isInvalidArgument(error: Error): boolean {
  return (error as { code?: unknown }).code === 'UND_ERR_INVALID_ARG';
}
