// nestjs-circuit-breaker/axios: a breaker in front of every request of an axios instance or
// of @nestjs/axios's HttpService (needs the optional peer axios; the root entry never imports it).
export { withCircuitBreaker } from './axios-circuit-breaker.js';
export type {
  AxiosCircuitBreakerOptions,
  AxiosTarget,
} from './axios-circuit-breaker-options.interface.js';
export { provideAxiosCircuitBreaker } from './axios-circuit-breaker.provider.js';
