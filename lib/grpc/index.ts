// nestjs-circuit-breaker/grpc: a breaker for @grpc/grpc-js clients (an optional peer; the root
// entry never imports it).
export { withCircuitBreaker } from './grpc-circuit-breaker.interceptor.js';
export type {
  GrpcCircuitBreakerOptions,
  GrpcRequest,
} from './grpc-circuit-breaker-options.interface.js';
export { GrpcStatusError } from './grpc-status.error.js';
