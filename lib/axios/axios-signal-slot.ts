import type { InternalAxiosRequestConfig } from 'axios';
import type { RequestSignal } from './axios-request-signal.js';

/**
 * Where a request's signal goes, for axios' own adapters (any other gets a
 * copy of the config): the config axios hands an adapter is its own
 * copy for this request (merged from the instance's defaults and the caller's
 * config, then flattened), so the call's signal is set on it while the
 * request runs, and the caller's own (or none) put back before the response
 * or its error is seen, by axios too (which reads `config.signal` again when
 * the adapter settles): a retry that sends `error.config` again must not
 * inherit a signal that has already aborted. Setting one field costs a
 * fraction of copying the config, which has some thirty of them.
 *
 * @internal
 */
export class SignalSlot {
  private readonly own: boolean;
  /** The caller's own signal, if any. */
  readonly callers: InternalAxiosRequestConfig['signal'];

  constructor(readonly config: InternalAxiosRequestConfig) {
    this.own = Object.hasOwn(config, 'signal');
    this.callers = config.signal;
  }

  /** Whether the config can take a signal (an adapter called with a frozen one gets a copy). */
  get writable(): boolean {
    return Object.isExtensible(this.config);
  }

  set(signal: AbortSignal | RequestSignal): void {
    this.config.signal = signal as AbortSignal;
  }

  /** Puts the caller's signal back, once the request or the call has ended (whichever is first). */
  restore(): void {
    const config = this.config;
    if (config.signal === this.callers) return;
    if (this.own) config.signal = this.callers;
    else delete config.signal;
  }

  /** Whether the caller cancelled the request (its `cancelToken` or its own `signal`): not the dependency's fault. */
  get cancelled(): boolean {
    return this.config.cancelToken?.reason != null || this.callers?.aborted === true;
  }
}
