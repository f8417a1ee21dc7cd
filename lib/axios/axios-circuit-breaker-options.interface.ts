import type { AxiosInstance, InternalAxiosRequestConfig } from 'axios';
import type { Breaker } from '../core/index.js';

/**
 * How `withCircuitBreaker()` protects the requests of an axios instance.
 *
 * @publicApi
 */
export interface AxiosCircuitBreakerOptions {
  /**
   * The breaker every request goes through: a plain breaker (one for the
   * whole instance), or a per-key family (`perKey` option: one child per
   * origin, `protocol//host:port`, or per `key`).
   */
  breaker: Breaker;
  /**
   * The key of a request's child in a per-key family, from the request's
   * config as the adapter gets it (`baseURL` and `url` merged in).
   * `undefined` or `''`: the family's `FAMILY_DEFAULT_KEY`; a key function
   * that throws is reported once and the request goes on under that key.
   * Without `key`, the child is the request's origin. Only with a per-key family.
   */
  key?: (config: InternalAxiosRequestConfig) => string | undefined;
  /** Requests for which this returns `true` bypass the breaker: not counted, never refused. */
  skip?: (config: InternalAxiosRequestConfig) => boolean;
  /**
   * The deadline of a request in milliseconds, instead of the breaker's
   * `timeoutMs`; `undefined`: the breaker's. `false` (none) only on a breaker
   * built with `timeoutMs: false`. axios' own `timeout` is not read: it is
   * often an instance-wide default, which would silently replace the deadline
   * the breaker was given; to use it, `timeoutMs: (config) => config.timeout || undefined`.
   * A value the breaker refuses rejects the request, which is not sent.
   */
  timeoutMs?: (config: InternalAxiosRequestConfig) => number | false | undefined;
}

/**
 * What axios needs of the target of `withCircuitBreaker()`: an axios instance
 * (`axios`, `axios.create()`), or anything that holds one as `axiosRef`, such
 * as @nestjs/axios's `HttpService`.
 *
 * @publicApi
 */
export type AxiosTarget = AxiosInstance | { readonly axiosRef: AxiosInstance };
