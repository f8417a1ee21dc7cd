import axios from 'axios';
import type { AxiosAdapter, AxiosInstance, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { Breaker } from '../core/index.js';
import type { CallPermit } from '../core/index.js';
import type {
  AxiosCircuitBreakerOptions,
  AxiosTarget,
} from './axios-circuit-breaker-options.interface.js';
import { executeRequest } from './axios-executed-request.js';
import { sendUnderPermit } from './axios-permit-request.js';
import { cancellableBody } from './axios-stream-body.js';
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
    if (!light) return executeRequest(inner, config, breaker, timeoutMs, light);
    // The caller's own signal, read before the request's takes its place: it still aborts a streamed body.
    const caller = config.responseType === 'stream' ? config.signal : undefined;
    const sent = sendToOwnAdapter(inner, config, breaker, timeoutMs);
    return caller == null ? sent : cancellableBody(sent, caller, config);
  };
  protectedAdapters.set(adapter, { wiring, inner });
  return adapter;
}

/** A request to one of axios' own adapters (`http`, `xhr`) through `breaker`. */
function sendToOwnAdapter(
  inner: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  breaker: Breaker,
  timeoutMs: number | false | undefined,
): Promise<AxiosResponse> {
  // They settle when their signal aborts: the permit is enough, unless the request may queue.
  if (!Object.isExtensible(config) || mayQueue(breaker))
    return executeRequest(inner, config, breaker, timeoutMs, true);
  let permit: CallPermit;
  try {
    // A refusal, or a deadline the breaker refuses: the request is not sent.
    permit = breaker.acquire(timeoutMs === undefined ? undefined : { timeoutMs });
  } catch (refusal) {
    return Promise.reject(refusal);
  }
  return sendUnderPermit(inner, config, permit);
}

/** Whether a call may wait for a bulkhead slot: `acquire()` would refuse it instead. */
function mayQueue(breaker: Breaker): boolean {
  const bulkhead = breaker.config.bulkhead;
  return bulkhead !== undefined && bulkhead.maxQueue > 0;
}
