// The root entry: the engine and the Nest layer. It never imports an optional
// peer; integrations have their own subpath exports.
export * from './core/index.js';
export { getCallSignal } from './call-signal.js';
export { CIRCUIT_BREAKER_EVENTS } from './circuit-breaker-event.publisher.js';
export type { CircuitBreakerRejectedPayload, CircuitBreakerTransitionPayload } from './circuit-breaker-event.publisher.js';
export { CircuitBreakerModule } from './circuit-breaker.module.js';
export { CircuitBreakerModuleMissingError } from './circuit-breaker-module-missing.error.js';
export { CIRCUIT_BREAKER_MODULE_OPTIONS } from './circuit-breaker.module-definition.js';
export type { CircuitBreakerModuleExtras } from './circuit-breaker.module-definition.js';
export { CircuitBreakerEvents } from './circuit-breaker.events.js';
export { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
export { circuitBreaker } from './circuit-breaker.operator.js';
export type { CircuitBreakerOperatorOptions } from './circuit-breaker.operator.js';
export { CircuitBreakerExceptionFilter } from './circuit-breaker.exception-filter.js';
export { breakerHttpResponse, isBreakerHttpError } from './circuit-breaker-http.mapping.js';
export type {
  BreakerHttpResponse,
  CallTimeoutDetailedResponseBody,
  CallTimeoutResponseBody,
  CircuitOpenDetailedResponseBody,
  CircuitOpenResponseBody,
} from './circuit-breaker-http.mapping.js';
export type { CircuitBreakerHttpOptions } from './interfaces/circuit-breaker-http-options.interface.js';
export { CircuitBreaker } from './decorators/circuit-breaker.decorator.js';
export { getCircuitBreakerToken, InjectCircuitBreaker } from './decorators/inject-circuit-breaker.decorator.js';
export type { CircuitBreakerEvent } from './interfaces/circuit-breaker-event.interface.js';
export type { CircuitBreakerEventSink, CircuitBreakerLoggingOptions } from './interfaces/circuit-breaker-logging-options.interface.js';
export type {
  CircuitBreakerFallback,
  CircuitBreakerMethodOptions,
  LastGoodFallback,
} from './interfaces/circuit-breaker-method-options.interface.js';
export type {
  CircuitBreakerModuleOptions,
  CircuitBreakerOptionsFactory,
} from './interfaces/circuit-breaker-module-options.interface.js';
