// nestjs-circuit-breaker/undici: needs the optional peer undici ^7 (its Agent, request() and fetch, or Node's global fetch).
export { withCircuitBreaker } from './with-circuit-breaker.js';
export type {
  UndiciCircuitBreakerOptions,
  UndiciResponseHead,
} from './undici-circuit-breaker-options.interface.js';
