// The root entry: the engine and the Nest layer. It never imports an optional
// peer; integrations have their own subpath exports. Every name is listed: a name
// added to `./core` is public at the root only once it is added here too.

// The engine: the names of `nestjs-circuit-breaker/core` a Nest user meets (in
// the options, the objects handed out, the errors). What builds a breaker outside
// Nest or a store (`BreakerDeps`, `HealthCheckScheduler`, `BreakerCoordinator`...) stays
// in `/core` only: tools/pack-check.mjs lists those values.
export {
  Breaker,
  BREAKER_DEFAULTS,
  BreakerConfigError,
  BreakerHookError,
  CallRejectedError,
  CallTimeoutError,
  ConcurrencyLimiter,
  CRITICALITIES,
  defaultClassifyError,
  defaultClassifyResult,
  ensureOk,
  FAMILY_DEFAULT_KEY,
  FAMILY_OVERFLOW_KEY,
  httpStatusOf,
  InjectedFaultError,
  isCallRejected,
  LIMIT_DEFAULTS,
  parseRetryAfter,
  RETRY_DEFAULTS,
  retryAfterOf,
  UpstreamHttpError,
  withRetry,
} from './core/index.js';
export type {
  AdmissionPeek,
  AggregateOptions,
  BackoffOptions,
  BreakerCoordination,
  BreakerEventMap,
  BreakerEventName,
  BreakerListener,
  BreakerOptions,
  BreakerSnapshot,
  BreakerState,
  BreakerStore,
  BreakerThresholds,
  BreakerTotals,
  BulkheadOptions,
  BulkheadSnapshot,
  CallContext,
  CallOutcome,
  CallPermit,
  Clock,
  ConcurrencyLimitOptions,
  ConcurrencyLimitSnapshot,
  CountWindowOptions,
  ErrorClassifier,
  ExecuteOptions,
  FailureCategory,
  FailureEvent,
  FailureSummary,
  FallbackEvent,
  FamilySnapshot,
  LimitAlgorithmName,
  LimitPermit,
  FaultInjectionOptions,
  ForcedMode,
  ForcedStateSnapshot,
  ForceOptions,
  HalfOpenOptions,
  HalfOpenSnapshot,
  IgnoredEvent,
  InjectedFault,
  InjectedFaultSnapshot,
  OverloadOptions,
  PerKeyOptions,
  ProbeEvent,
  RampUpOptions,
  RampUpSnapshot,
  HealthCheckEvent,
  HealthCheckSnapshot,
  HealthCheckContext,
  HealthCheckOptions,
  ProtectedCall,
  ReconfigurationReset,
  ReconfiguredEvent,
  RejectedEvent,
  RejectionCode,
  RejectionReason,
  RetryBackoffOptions,
  RetryBudgetOptions,
  RetryEvent,
  RetryingBreaker,
  RetryOptions,
  ResolvedBreakerOptions,
  ResultClassifier,
  ShareOptions,
  SlowCallEvent,
  StateChangeEvent,
  SuccessEvent,
  TimeoutEvent,
  TimeWindowOptions,
  TransitionEvidence,
  TransitionReason,
  UpstreamBodyReader,
  UpstreamResponse,
  WindowOptions,
  WindowSnapshot,
} from './core/index.js';

// The Nest layer.
export { getCallSignal } from './call-signal.js';
export { CIRCUIT_BREAKER_EVENTS } from './circuit-breaker-event.publisher.js';
export type {
  CircuitBreakerRejectedPayload,
  CircuitBreakerTransitionPayload,
} from './circuit-breaker-event.publisher.js';
export { CircuitBreakerModule } from './circuit-breaker.module.js';
export { CircuitBreakerModuleMissingError } from './circuit-breaker-module-missing.error.js';
export { CIRCUIT_BREAKER_MODULE_OPTIONS } from './circuit-breaker.module-definition.js';
export { CircuitBreakerEvents } from './circuit-breaker.events.js';
export { circuitBreakerOptionsFromEnv } from './config/circuit-breaker-env.js';
export type { CircuitBreakerConfigTree, CircuitBreakerReload } from './circuit-breaker.reload.js';
export type {
  CircuitBreakerEnvConfig,
  CircuitBreakerEnvOptions,
} from './config/circuit-breaker-env.js';
export { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
export { circuitBreaker } from './circuit-breaker.operator.js';
export type { CircuitBreakerOperatorOptions } from './circuit-breaker.operator.js';
export { CircuitBreakerExceptionFilter } from './circuit-breaker.exception-filter.js';
export { toHttpResponse } from './circuit-breaker-http.mapping.js';
export type {
  CircuitBreakerHttpResponse,
  CircuitBreakerResponseBody,
} from './circuit-breaker-http.mapping.js';
export type { CircuitBreakerHttpOptions } from './interfaces/circuit-breaker-http-options.interface.js';
export { toErrorPayload } from './circuit-breaker-transport.mapping.js';
export type { CircuitBreakerErrorPayload } from './circuit-breaker-transport.mapping.js';
export { CircuitBreaker } from './decorators/circuit-breaker.decorator.js';
export { RequireCircuitBreaker } from './decorators/require-circuit-breaker.decorator.js';
export { UseCircuitBreaker } from './decorators/use-circuit-breaker.decorator.js';
export { CircuitBreakerGuard } from './circuit-breaker.guard.js';
export { CircuitBreakerInterceptor } from './circuit-breaker.interceptor.js';
export { ConcurrencyLimit } from './decorators/concurrency-limit.decorator.js';
// The decorator and the engine's type of one name: the decorator's file declares both.
export { Criticality } from './decorators/criticality.decorator.js';
export { ConcurrencyLimitInterceptor } from './concurrency-limit.interceptor.js';
export type {
  ConcurrencyLimitMethodOptions,
  CriticalityOptions,
} from './interfaces/concurrency-limit-options.interface.js';
export type {
  CircuitBreakerRequirement,
  UseCircuitBreakerOptions,
} from './interfaces/circuit-breaker-admission-options.interface.js';
export {
  getCircuitBreakerToken,
  InjectCircuitBreaker,
} from './decorators/inject-circuit-breaker.decorator.js';
export type { CircuitBreakerEvent } from './interfaces/circuit-breaker-event.interface.js';
export type {
  CircuitBreakerEventSink,
  CircuitBreakerLoggingOptions,
} from './interfaces/circuit-breaker-logging-options.interface.js';
export type {
  CircuitBreakerFallback,
  CircuitBreakerMethodOptions,
  LastGoodFallback,
} from './interfaces/circuit-breaker-method-options.interface.js';
export type {
  CircuitBreakerModuleAsyncOptions,
  CircuitBreakerModuleOptions,
  CircuitBreakerOptionsFactory,
} from './interfaces/circuit-breaker-module-options.interface.js';
export type {
  FleetReconfigured,
  FleetScope,
  FleetWrite,
} from './interfaces/fleet-control.interface.js';
export type {
  CircuitBreakerControl,
  CircuitBreakerFleetControl,
} from './interfaces/circuit-breaker-control.interface.js';
