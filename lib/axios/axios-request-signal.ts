import type { GenericAbortSignal, InternalAxiosRequestConfig } from 'axios';

type Token = NonNullable<InternalAxiosRequestConfig['cancelToken']>;

/**
 * The signal a protected request is sent with: what axios' adapters use of
 * an `AbortSignal` (`aborted`, `reason`, the `abort` event, `onabort`,
 * `throwIfAborted()`), aborted when the breaker gives up on the call (its
 * deadline, the caller's cancel, a probe it abandons) before the request
 * settled. Not an `AbortController`'s: with its listener added and removed,
 * one of those costs a request more than everything else the breaker does
 * for it (about 10 µs and its garbage, on Node 20).
 *
 * Given the caller's own signal (`source`) or cancel token (`token`), it
 * follows them: the caller's abort or cancel aborts it, with the caller's
 * reason, until `settle()`. So it also stands for the caller's cancel as
 * one signal (`callerSignalOf()`).
 *
 * @internal
 */
export class RequestSignal {
  aborted = false;
  reason: unknown = undefined;
  onabort: ((this: RequestSignal, event: unknown) => void) | null = null;
  /** The request has settled: what the breaker decides later does not abort it. */
  settled = false;
  // An adapter listens once per request: one listener in a field, an array only past it.
  private listener: ((this: RequestSignal, event: unknown) => void) | undefined = undefined;
  private more: ((this: RequestSignal, event: unknown) => void)[] | undefined = undefined;
  // Made only for what there is to follow: HttpService's requests have a token and no signal.
  private readonly onSource: (() => void) | undefined = undefined;
  private readonly onCancel: ((reason: unknown) => void) | undefined = undefined;

  constructor(
    private readonly source?: GenericAbortSignal,
    private readonly token?: Token,
  ) {
    if (source !== undefined) {
      this.onSource = () => this.abort((source as { reason?: unknown }).reason);
      if (source.aborted) this.onSource();
      else source.addEventListener?.('abort', this.onSource);
    }
    if (token !== undefined) {
      this.onCancel = (reason) => this.abort(reason);
      // Calls onCancel at once when the token was already cancelled.
      token.subscribe(this.onCancel);
    }
  }

  addEventListener(type: string, listener: (this: RequestSignal, event: unknown) => void): void {
    if (type !== 'abort' || typeof listener !== 'function' || this.aborted) return;
    if (this.listener === undefined) this.listener = listener;
    else (this.more ??= []).push(listener);
  }

  removeEventListener(type: string, listener: (this: RequestSignal, event: unknown) => void): void {
    if (type !== 'abort') return;
    if (this.listener === listener) this.listener = this.more?.shift();
    else if (this.more !== undefined) this.more = this.more.filter((l) => l !== listener);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /** The request has settled: nothing aborts it any more, and the caller's signal and token are let go. */
  settle(): void {
    this.settled = true;
    this.listener = undefined;
    this.more = undefined;
    if (this.onSource !== undefined) this.source!.removeEventListener?.('abort', this.onSource);
    if (this.onCancel !== undefined) this.token!.unsubscribe(this.onCancel);
  }

  /** The breaker gave up on the call with `reason`: the request, if still going, is aborted. */
  abort(reason: unknown): void {
    if (this.aborted || this.settled) return;
    this.aborted = true;
    this.reason = reason;
    const first = this.listener;
    const more = this.more;
    this.listener = undefined;
    this.more = undefined;
    // As an EventTarget does: `this` is the signal (axios' fetch adapter reads this.reason).
    const event = { type: 'abort', target: this };
    this.onabort?.call(this, event);
    first?.call(this, event);
    if (more !== undefined) for (const listener of more) listener.call(this, event);
  }
}
