import type { InternalAxiosRequestConfig } from 'axios';

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
  const controller = new AbortController();
  const abort = (reason?: unknown): void => {
    if (!controller.signal.aborted) controller.abort(reason);
  };
  const onAbort = (): void => abort((signal as { reason?: unknown } | undefined)?.reason);
  const onCancel = (reason: unknown): void => abort(reason);
  if (signal != null) {
    if (signal.aborted) onAbort();
    else signal.addEventListener?.('abort', onAbort);
  }
  cancelToken?.subscribe(onCancel);
  return {
    signal: controller.signal,
    dispose: () => {
      signal?.removeEventListener?.('abort', onAbort);
      cancelToken?.unsubscribe(onCancel);
    },
  };
}
