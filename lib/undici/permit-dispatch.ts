import type { CallPermit } from '../core/index.js';
import { expired, injected, type BreakerRequest } from './breaker-request.js';

/**
 * What `dispatchThroughPermit()` needs of a request's handler besides the
 * request itself: how it is sent, and how its caller is started before a
 * fault's latency.
 *
 * @internal
 */
export interface PermitDispatch extends BreakerRequest {
  /** Sends the request to undici, with this handler: the work the permit performs. */
  send(): boolean;
  /**
   * A fault's latency starts: the caller's handler is given its way to abort
   * now, not when undici starts the request after the latency.
   */
  startCaller(): void;
}

/** Dispatches one request through its permit; the breaker's deadline runs from here. @internal */
export function dispatchThroughPermit(call: PermitDispatch): boolean {
  const permit = call.permit;
  // The breaker's deadline, on its one timer, told synchronously (the operator's way): track() would cost
  // two promises and a microtask per request. The permit is settled at the response's headers.
  if (permit.timeoutMs !== undefined) permit.watchDeadline((error) => expired(call, error));
  // A probe the breaker gives up on (halfOpen.maxWaitMs) is told through its signal only.
  if (permit.probe) {
    const signal = permit.signal;
    signal.addEventListener('abort', () => expired(call, signal.reason as Error), { once: true });
  }
  return performThrough(permit, call);
}

/** The request sent through `permit.perform()`: an injected fault (faultInjection) applies, before anything is sent. */
function performThrough(permit: CallPermit, call: PermitDispatch): boolean {
  let dispatched = false;
  let started: boolean | PromiseLike<boolean>;
  try {
    started = permit.perform(() => {
      dispatched = true;
      return call.send();
    });
  } catch (error) {
    // A request undici would not even take says nothing about the dependency.
    if (dispatched) {
      permit.release();
      throw error;
    }
    injected(call, error as Error);
    return true;
  }
  if (typeof started === 'boolean') return started;
  // A fault's latency first: the request goes out after it, unless the fault fails it, or the deadline or a
  // release ends the wait (then the caller has heard already, or hears it here). The caller may abort meanwhile.
  call.startCaller();
  started.then(undefined, (error: unknown) => {
    if (dispatched) permit.release();
    injected(call, error as Error);
  });
  return true;
}
