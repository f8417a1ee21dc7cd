import type { FactoryProvider, InjectionToken, OnModuleDestroy } from '@nestjs/common';
import { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type {
  AxiosCircuitBreakerOptions,
  AxiosTarget,
} from './axios-circuit-breaker-options.interface.js';
import { withCircuitBreaker } from './axios-circuit-breaker.js';
import { isDefaultAxiosInstance } from './axios-default-instance.js';
import { axiosMessages } from './axios.messages.js';

/**
 * A provider that puts the registry's breaker `breakerName` in front of every
 * request of the client provided as `client` in the same module (an
 * `HttpService` of `HttpModule.register()`, or an axios instance provided
 * under a token), when the application starts, and takes it away when the
 * module is destroyed:
 * `providers: [provideAxiosCircuitBreaker(HttpService, 'upstream')]`.
 * The client is passed by the caller, so this entry point never loads
 * @nestjs/axios itself. A client that is axios' process-wide default
 * instance (plain `HttpModule`, without `register()`) is refused at start-up:
 * its breaker would be in front of every axios call of the process.
 *
 * @publicApi
 */
export function provideAxiosCircuitBreaker(
  client: InjectionToken<AxiosTarget>,
  breakerName: string,
  options?: Omit<AxiosCircuitBreakerOptions, 'breaker'>,
): FactoryProvider<OnModuleDestroy> {
  return {
    provide: Symbol(`nestjs-circuit-breaker.axios:${breakerName}`),
    inject: [client, CircuitBreakerRegistry],
    useFactory: (target: AxiosTarget, registry: CircuitBreakerRegistry) => {
      if (isDefaultAxiosInstance(target))
        throw new TypeError(axiosMessages.defaultInstance(breakerName));
      const unwrap = withCircuitBreaker(target, { ...options, breaker: registry.get(breakerName) });
      return { onModuleDestroy: unwrap };
    },
  };
}
