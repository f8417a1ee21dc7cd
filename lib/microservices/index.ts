// nestjs-circuit-breaker/microservices: answers and classification for @nestjs/microservices
// (an optional peer; the root entry never imports it).
export { CircuitBreakerRpcExceptionFilter } from './circuit-breaker-rpc.exception-filter.js';
export { toRpcException } from './circuit-breaker-rpc.mapping.js';
export { classifyRpcError } from './rpc-error.classifier.js';
export { classifyGrpcError } from './grpc-status.classifier.js';
