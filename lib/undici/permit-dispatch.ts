import type { CallPermit } from '../core/index.js';

/**
 * What `dispatchThroughPermit()` needs of a request's handler: its permit,
 * and how it hears the deadline, an injected failure, and the start of a
 * fault's latency.
 *
 * @internal
 */
export interface PermitDispatch {
  readonly permit: CallPermit;
  /** The breaker's deadline passed before the headers (or a probe expired). */
  onDeadline(error: Error): void;
  /** An injected failure (or the end of its latency): counted as the call's failure, and the caller hears it. */
  injected(error: Error): void;
  /**
   * A fault's latency starts: the caller's handler is given its way to abort
   * now, not when undici starts the request after the latency.
   */
  startCaller(): void;
  /** A dispatch undici would not even take (it threw): the permit is released, the caller hears nothing here. */
  release(): void;
}

/** Dispatches one request through its permit; the breaker's deadline runs from here. @internal */
export function dispatchThroughPermit(call: PermitDispatch, dispatch: () => boolean): boolean {
  const permit = call.permit;
  // The breaker's deadline, on its one timer, told synchronously (the operator's way): track() would cost
  // two promises and a microtask per request. The permit is settled at the response's headers.
  if (permit.timeoutMs !== undefined) permit.watchDeadline((error) => call.onDeadline(error));
  // A probe the breaker gives up on (halfOpen.maxWaitMs) is told through its signal only.
  if (permit.probe) {
    const signal = permit.signal;
    signal.addEventListener('abort', () => call.onDeadline(signal.reason as Error), {
      once: true,
    });
  }
  let dispatched = false;
  let started: boolean | PromiseLike<boolean>;
  try {
    // Through the permit: an injected fault (faultInjection) applies here, before anything is sent.
    started = permit.perform(() => {
      dispatched = true;
      return dispatch();
    });
  } catch (error) {
    // A request undici would not even take says nothing about the dependency.
    if (dispatched) {
      call.release();
      throw error;
    }
    call.injected(error as Error);
    return true;
  }
  if (typeof started === 'boolean') return started;
  // A fault's latency first: the request goes out after it, unless the fault fails it, or the deadline or a
  // release ends the wait (then the caller has heard already, or hears it here). The caller may abort meanwhile.
  call.startCaller();
  started.then(undefined, (error: unknown) => {
    if (dispatched) permit.release();
    call.injected(error as Error);
  });
  return true;
}
