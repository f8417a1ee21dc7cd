import type { GenericAbortSignal, InternalAxiosRequestConfig } from 'axios';

/** The caller's own way of cancelling a request, as one signal, and how to stop listening. @internal */
export interface CallerSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

const NOTHING_TO_DISPOSE = (): void => undefined;

/**
 * One signal for everything the caller can cancel a request with: its
 * `signal` (a DOM `AbortSignal` or one that only looks like it) and its
 * `cancelToken` (@nestjs/axios's `HttpService` gives every request one, and
 * cancels it when the subscriber unsubscribes). The breaker counts a call the
 * caller cancelled as `ignored`. `undefined` when the caller cannot cancel.
 *
 * @internal
 */
export function callerSignalOf(config: InternalAxiosRequestConfig): CallerSignal | undefined {
  const { signal, cancelToken } = config;
  if (cancelToken == null) {
    if (signal == null) return undefined;
    if (signal instanceof AbortSignal) return { signal, dispose: NOTHING_TO_DISPOSE };
  }
  return new CancelSignal(signal ?? undefined, cancelToken ?? undefined);
}

type Token = NonNullable<InternalAxiosRequestConfig['cancelToken']>;

/**
 * What the breaker uses of an `AbortSignal` (`aborted`, `reason`, the `abort`
 * event), over a cancel token and a signal. Not an `AbortController`: making
 * one costs more than the rest of the wrapper's work for a request, and
 * `HttpService` gives every request a token. The request itself gets a
 * `RequestSignal`, aborted when the call ends first.
 */
class CancelSignal implements CallerSignal {
  aborted = false;
  reason: unknown = undefined;
  // The breaker listens once per call: one listener in a field, an array only past it.
  private listener: (() => void) | undefined = undefined;
  private more: (() => void)[] | undefined = undefined;
  // Made only when there is a signal to listen to: HttpService's requests have a token and no signal.
  private readonly onAbort: (() => void) | undefined;
  private readonly onCancel = (reason: unknown): void => this.abort(reason);

  constructor(
    private readonly source: GenericAbortSignal | undefined,
    private readonly token: Token | undefined,
  ) {
    if (source !== undefined) {
      this.onAbort = () => this.abort((source as { reason?: unknown }).reason);
      if (source.aborted) this.onAbort();
      else source.addEventListener?.('abort', this.onAbort);
    }
    // Calls onCancel at once when the token was already cancelled.
    token?.subscribe(this.onCancel);
  }

  get signal(): AbortSignal {
    return this as unknown as AbortSignal;
  }

  addEventListener(type: string, listener: () => void): void {
    if (type !== 'abort') return;
    if (this.listener === undefined) this.listener = listener;
    else (this.more ??= []).push(listener);
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type !== 'abort') return;
    if (this.listener === listener) this.listener = this.more?.shift();
    else if (this.more !== undefined) this.more = this.more.filter((l) => l !== listener);
  }

  readonly dispose = (): void => {
    if (this.onAbort !== undefined) this.source?.removeEventListener?.('abort', this.onAbort);
    this.token?.unsubscribe(this.onCancel);
    this.listener = undefined;
    this.more = undefined;
  };

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const first = this.listener;
    const more = this.more;
    this.listener = undefined;
    this.more = undefined;
    first?.();
    if (more !== undefined) for (const listener of more) listener();
  }
}
