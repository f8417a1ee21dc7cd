import axios from 'axios';
import type { AxiosAdapter, AxiosInstance, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { Breaker } from '../core/index.js';
import type { CallContext } from '../core/index.js';
import type {
  AxiosCircuitBreakerOptions,
  AxiosTarget,
} from './axios-circuit-breaker-options.interface.js';
import { callerSignalOf } from './axios-caller-signal.js';
import { RequestSignal } from './axios-request-signal.js';
import { requestOrigin } from './axios-request-origin.js';
import { axiosMessages } from './axios.messages.js';
import { keyFor } from '../circuit-key.js';

// Where a key function's faults are reported from (once per site, as for every key option).
const KEY_SITE = 'withCircuitBreaker() of nestjs-circuit-breaker/axios';

/** The breaker of one wired instance, and how a request finds its breaker. */
interface Wiring {
  readonly breakerOf: (config: InternalAxiosRequestConfig) => Breaker;
  readonly skip: ((config: InternalAxiosRequestConfig) => boolean) | undefined;
  readonly timeoutMs: AxiosCircuitBreakerOptions['timeoutMs'];
  /** The protected form of each adapter requests used, made once (weakly: the fetch adapter may be made per request). */
  readonly adapters: WeakMap<AxiosAdapter, AxiosAdapter>;
  /** False once taken away: a config that still holds one of its adapters (a retry) goes straight through. */
  active: boolean;
}

/** A protected adapter: the wiring it belongs to, and the adapter it protects. */
interface Protected {
  readonly wiring: Wiring;
  readonly inner: AxiosAdapter;
}

// The adapters this module made: a config sent again (a retry sends error.config) already holds
// one, which must not be wrapped twice; one of a wiring taken away gives its own adapter back.
const protectedAdapters = new WeakMap<AxiosAdapter, Protected>();
const wiredInstances = new WeakSet<AxiosInstance>();

/**
 * Puts `options.breaker` in front of every request of an axios instance (or
 * of an `HttpService`'s `axiosRef`), and returns the function that takes it
 * away again.
 *
 * A request interceptor wraps the adapter the request would use (its own
 * `adapter`, or the instance's default), so the breaker decides before
 * anything is sent: a refused request opens no connection and rejects with
 * `CallRejectedError`. The breaker's deadline aborts the request (its signal
 * is the request's `signal`; the caller's `signal` and `cancelToken` still
 * cancel it, and a cancelled request is `ignored`). A response, or the
 * response of an `AxiosError` that `validateStatus` refused, is classified by
 * its status and its `Retry-After`-style headers; an error without a response
 * (refused connection, reset, axios' own `timeout`) is a failure.
 *
 * @publicApi
 */
export function withCircuitBreaker(
  target: AxiosTarget,
  options: AxiosCircuitBreakerOptions,
): () => void {
  const instance = instanceOf(target);
  const wiring = wiringOf(options);
  if (wiredInstances.has(instance))
    throw new TypeError(axiosMessages.alreadyProtected(options.breaker.name));
  wiredInstances.add(instance);
  const id = instance.interceptors.request.use(
    (config) => {
      const current = config.adapter;
      const made = typeof current === 'function' ? protectedAdapters.get(current) : undefined;
      if (made?.wiring !== wiring)
        config.adapter = protectedAdapterOf(
          made?.inner ?? axios.getAdapter(current ?? axios.defaults.adapter, config),
          wiring,
        );
      return config;
    },
    undefined,
    { synchronous: true },
  );
  return () => {
    if (!wiring.active) return;
    wiring.active = false;
    instance.interceptors.request.eject(id);
    wiredInstances.delete(instance);
  };
}

function instanceOf(target: AxiosTarget): AxiosInstance {
  const instance =
    typeof target === 'object' && target !== null && 'axiosRef' in target
      ? target.axiosRef
      : target;
  if (
    typeof instance !== 'function' ||
    typeof (instance as Partial<AxiosInstance>).interceptors?.request?.use !== 'function'
  )
    throw new TypeError(axiosMessages.notAnInstance(target));
  return instance;
}

function wiringOf(options: AxiosCircuitBreakerOptions): Wiring {
  const breaker = (options as Partial<AxiosCircuitBreakerOptions> | undefined)?.breaker;
  if (!(breaker instanceof Breaker)) throw new TypeError(axiosMessages.noBreaker(breaker));
  const { key, skip, timeoutMs } = options;
  if (key !== undefined && typeof key !== 'function')
    throw new TypeError(axiosMessages.notAFunction(breaker.name, 'key', key));
  if (timeoutMs !== undefined && typeof timeoutMs !== 'function')
    throw new TypeError(axiosMessages.notAFunction(breaker.name, 'timeoutMs', timeoutMs));
  if (skip !== undefined && typeof skip !== 'function')
    throw new TypeError(axiosMessages.notAFunction(breaker.name, 'skip', skip));
  // A family's children share its options: only the family itself has no parent.
  const family = breaker.config.perKey !== undefined && breaker.parent === undefined;
  if (key !== undefined && !family)
    throw new TypeError(axiosMessages.keyWithoutFamily(breaker.name));
  const breakerOf = !family
    ? () => breaker
    : key === undefined
      ? (config: InternalAxiosRequestConfig) => breaker.forKey(requestOrigin(config))
      : (config: InternalAxiosRequestConfig) =>
          breaker.forKey(keyFor(breaker, KEY_SITE, key, config));
  return { breakerOf, skip, timeoutMs, adapters: new WeakMap(), active: true };
}

function protectedAdapterOf(inner: AxiosAdapter, wiring: Wiring): AxiosAdapter {
  let adapter = wiring.adapters.get(inner);
  if (adapter === undefined) {
    adapter = protectAdapter(inner, wiring);
    wiring.adapters.set(inner, adapter);
  }
  return adapter;
}

// axios' own adapters that use of the request's signal only `aborted` and its `abort` event: they get a
// RequestSignal. Any other adapter (axios' fetch adapter, yours) may hand it to what wants a real AbortSignal.
const LIGHT_SIGNAL_ADAPTERS = new Set(['http', 'xhr']);

/** The adapter `inner` behind the breaker of `wiring`. */
function protectAdapter(inner: AxiosAdapter, wiring: Wiring): AxiosAdapter {
  const light = LIGHT_SIGNAL_ADAPTERS.has(String((inner as { adapterName?: unknown }).adapterName));
  const adapter: AxiosAdapter = (config) => {
    if (!wiring.active || wiring.skip?.(config) === true) return inner(config);
    const breaker = wiring.breakerOf(config);
    const timeoutMs = wiring.timeoutMs?.(config);
    const caller = callerSignalOf(config);
    const slot = new SignalSlot(config);
    // axios' own adapters get a RequestSignal; any other, the call's own AbortSignal.
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
  };
  protectedAdapters.set(adapter, { wiring, inner });
  return adapter;
}

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
 */
class SignalSlot {
  private readonly own: boolean;
  private readonly callers: InternalAxiosRequestConfig['signal'];

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
      light.settled = true;
      slot.restore();
      return response;
    },
    (error: unknown) => {
      light.settled = true;
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
      if (light !== undefined) light.settled = true;
      if (response.config === sent) response.config = config;
      return response;
    },
    (error: unknown) => {
      if (light !== undefined) light.settled = true;
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
