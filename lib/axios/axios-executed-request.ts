import type { AxiosAdapter, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import type { Breaker, CallContext } from '../core/index.js';
import { callerSignalOf } from './axios-caller-signal.js';
import { RequestSignal } from './axios-request-signal.js';
import { SignalSlot } from './axios-signal-slot.js';

/**
 * One request through `breaker.execute()`: what the breaker cannot leave to
 * the adapter, because the adapter is not one of axios' own (`light`), so
 * it may ignore the signal and never settle, or because the request may wait
 * for a bulkhead slot, when the caller's cancel must also take it out of the
 * queue. The call settles at its deadline or at the caller's cancel whatever
 * the adapter does, and the request is aborted then. axios' own adapters get
 * a `RequestSignal`, any other the call's own `AbortSignal` on a copy of
 * the config.
 *
 * @internal
 */
export function executeRequest(
  inner: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  breaker: Breaker,
  timeoutMs: number | false | undefined,
  light: boolean,
): Promise<AxiosResponse> {
  const caller = callerSignalOf(config);
  const slot = new SignalSlot(config);
  const signal = light ? new RequestSignal() : undefined;
  const call = (context: CallContext): Promise<AxiosResponse> =>
    signal === undefined
      ? send(inner, slot, context.signal)
      : // A call that nothing can abort has its signal as a plain field (undefined); one that can makes an
        // AbortController when its signal is read, which the request's own signal makes unnecessary.
        Object.hasOwn(context, 'signal') && context.signal === undefined
        ? inner(config)
        : send(inner, slot, signal);
  const result =
    caller !== undefined
      ? breaker.execute(call, { signal: caller.signal, timeoutMs })
      : timeoutMs === undefined
        ? breaker.execute(call)
        : breaker.execute(call, { timeoutMs });
  return result.then(
    (response) => {
      caller?.dispose();
      slot.restore();
      return response;
    },
    (error: unknown) => {
      caller?.dispose();
      slot.restore();
      // Whatever ended the call before the request did (its deadline, the caller, an abandoned probe) aborts it.
      signal?.abort(error);
      throw error;
    },
  );
}

/**
 * Sends the request with `signal`: the call's own (aborted at the breaker's
 * deadline and when the caller cancels), or a `RequestSignal` the adapter
 * aborts then, set on the config for as long as the request runs.
 */
function send(
  inner: AxiosAdapter,
  slot: SignalSlot,
  signal: AbortSignal | RequestSignal | undefined,
): Promise<AxiosResponse> {
  if (signal === undefined) return inner(slot.config);
  // Only axios' own adapters (a RequestSignal) read the signal before their first await: once a call
  // ended first, the caller's signal goes back on the config while the adapter may still run. Any
  // other adapter gets a copy with the call's signal, which no restore can reach.
  if (!(signal instanceof RequestSignal) || !slot.writable)
    return sendCopy(inner, slot.config, signal as AbortSignal);
  const light = signal;
  slot.set(signal);
  let sent: Promise<AxiosResponse>;
  try {
    sent = inner(slot.config);
  } catch (error) {
    slot.restore();
    throw error;
  }
  return sent.then(
    (response) => {
      light.settle();
      slot.restore();
      return response;
    },
    (error: unknown) => {
      light.settle();
      slot.restore();
      throw error;
    },
  );
}

/** `send()` for a config that cannot take the signal: a copy with it, replaced by `config` in what comes back. */
function sendCopy(
  inner: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  signal: AbortSignal,
): Promise<AxiosResponse> {
  const sent = withSignal(config, signal);
  const light = signal instanceof RequestSignal ? signal : undefined;
  return inner(sent).then(
    (response) => {
      light?.settle();
      if (response.config === sent) response.config = config;
      return response;
    },
    (error: unknown) => {
      light?.settle();
      const loose = error as { config?: unknown; response?: { config?: unknown } } | null;
      if (typeof loose === 'object' && loose !== null) {
        if (loose.config === sent) loose.config = config;
        if (loose.response?.config === sent) loose.response.config = config;
      }
      throw error;
    },
  );
}

/**
 * A copy of `config` with `signal`. Copied key by key: the config axios hands
 * its adapter is a dictionary-mode object, which object spread copies about
 * four times slower.
 */
function withSignal(
  config: InternalAxiosRequestConfig,
  signal: AbortSignal,
): InternalAxiosRequestConfig {
  const copy = Object.create(Object.getPrototypeOf(config) as object | null) as Record<
    string,
    unknown
  >;
  const source = config as unknown as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    // An own "__proto__" (JSON.parse makes one) stays a property: assigning it would set the prototype.
    if (key === '__proto__')
      Object.defineProperty(copy, key, {
        value: source[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else copy[key] = source[key];
  }
  copy.signal = signal;
  return copy as unknown as InternalAxiosRequestConfig;
}
