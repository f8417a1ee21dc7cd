import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Breaker } from '../core/index.js';
import { GrpcBreakerCall, type GrpcBreakerSettings } from './grpc-breaker.call.js';
import type { GrpcCircuitBreakerOptions } from './grpc-circuit-breaker-options.interface.js';
import { grpcMessages } from './grpc.messages.js';

/**
 * A grpc-js client interceptor that puts every call of a client (the
 * `interceptors` client or channel option) or one call (the `interceptors`
 * call option) behind `options.breaker`:
 *
 * ```ts
 * const client = new Catalog(address, credentials.createInsecure(), {
 *   interceptors: [withCircuitBreaker({ breaker: registry.get('catalog') })],
 * });
 * ```
 *
 * A refused call never reaches the channel: it ends with `UNAVAILABLE`, the
 * rejection's message as details and `circuit-breaker-code`,
 * `circuit-breaker-reason` and `retry-after-ms` in its trailing metadata. An
 * admitted call is counted by its status, as `classifyGrpcError()` reads it,
 * with the server's pause (`grpc-retry-pushback-ms`, `retry-after-ms`) from
 * the trailing metadata; the breaker's deadline (or the call's own
 * `deadline` option, which replaces it) cancels it
 * (`DEADLINE_EXCEEDED`); the caller's own cancel is ignored. A per-key
 * family gets one child per method path, or per `key`. Every call type is
 * settled at its status: a server stream is one call, from its start to its
 * end, under one deadline.
 *
 * @publicApi
 */
export function withCircuitBreaker(options: GrpcCircuitBreakerOptions): Interceptor {
  const settings = settingsOf(options);
  return (callOptions, nextCall) =>
    new InterceptingCall(new GrpcBreakerCall(callOptions, nextCall, settings));
}

function settingsOf(options: GrpcCircuitBreakerOptions): GrpcBreakerSettings {
  const breaker: unknown = options?.breaker;
  if (!(breaker instanceof Breaker)) throw new TypeError(grpcMessages.notABreaker(breaker));
  const { key, skip } = options;
  if (key !== undefined && typeof key !== 'function')
    throw new TypeError(grpcMessages.notAFunction(breaker.name, 'key', key));
  if (skip !== undefined && typeof skip !== 'function')
    throw new TypeError(grpcMessages.notAFunction(breaker.name, 'skip', skip));
  const family = breaker.keyed !== undefined;
  if (key !== undefined && !family)
    throw new TypeError(grpcMessages.keyOnPlainBreaker(breaker.name));
  return { breaker, family, key, skip };
}
