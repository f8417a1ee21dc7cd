import type { InternalAxiosRequestConfig } from 'axios';
import { RequestSignal } from './axios-request-signal.js';

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
 * Not an `AbortController`: making one costs more than the rest of the
 * wrapper's work for a request; a `RequestSignal` following both does.
 *
 * @internal
 */
export function callerSignalOf(config: InternalAxiosRequestConfig): CallerSignal | undefined {
  const { signal, cancelToken } = config;
  if (cancelToken == null) {
    if (signal == null) return undefined;
    if (signal instanceof AbortSignal) return { signal, dispose: NOTHING_TO_DISPOSE };
  }
  const follower = new RequestSignal(signal ?? undefined, cancelToken ?? undefined);
  return { signal: follower as unknown as AbortSignal, dispose: () => follower.settle() };
}
