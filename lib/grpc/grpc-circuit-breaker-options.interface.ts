import type { InterceptorOptions, Metadata } from '@grpc/grpc-js';
import type { Breaker } from '../core/index.js';

/**
 * What `key` and `skip` see of a gRPC call, when it starts.
 *
 * @publicApi
 */
export interface GrpcRequest {
  /** The full method path, `/package.Service/Method`: the default key. */
  readonly method: string;
  /** The service, `package.Service`: `key: (request) => request.service` for one breaker per service. */
  readonly service: string;
  /** The call's request metadata (a tenant, a priority header). */
  readonly metadata: Metadata;
  /** The call's options: `deadline`, `method_definition` and the rest. */
  readonly options: InterceptorOptions;
}

/**
 * Options of `withCircuitBreaker()` from `nestjs-circuit-breaker/grpc`.
 *
 * @publicApi
 */
export interface GrpcCircuitBreakerOptions {
  /**
   * The breaker every call goes through: a plain breaker (every call of the
   * client shares it), or a per-key family (`perKey`), one child per method
   * path by default, or per `key`.
   */
  breaker: Breaker;
  /**
   * The key of a call in a per-key family; `undefined` puts the call under
   * the family's default key. Default: the method path,
   * `/package.Service/Method`. Needs a family.
   */
  key?: (request: GrpcRequest) => string | undefined;
  /** `true` bypasses the breaker for that call: it is neither refused nor counted. */
  skip?: (request: GrpcRequest) => boolean;
}
