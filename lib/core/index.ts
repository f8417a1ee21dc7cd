export { Breaker } from './breaker.js';
export type { ExecuteOptions } from './breaker.js';
export type { BreakerDeps } from './ports/breaker-environment.js';
export type {
  BreakerChannel,
  BreakerChannels,
  BreakerCallMessage,
  BreakerRejectedMessage,
  BreakerStateChangeMessage,
} from './ports/breaker-channels.js';
export type { AdmissionPeek } from './state/admission-peek.interface.js';
export type { CallContext, CallPermit, ProtectedCall } from './calls/tracked-call.js';
export { BREAKER_DEFAULTS } from './options/breaker-options.js';
export type {
  BackoffOptions,
  BreakerOptions,
  CountWindowOptions,
  HalfOpenOptions,
  OverloadOptions,
  PerKeyOptions,
  AggregateOptions,
  ShareOptions,
  TimeWindowOptions,
  WindowOptions,
} from './options/breaker-options.js';
export type {
  BreakerEventMap,
  BreakerEventName,
  BreakerListener,
  FailureEvent,
  FallbackEvent,
  IgnoredEvent,
  ProbeEvent,
  ReconfiguredEvent,
  RejectedEvent,
  RetryEvent,
  HealthCheckEvent,
  SlowCallEvent,
  StateChangeEvent,
  SuccessEvent,
  TimeoutEvent,
} from './events/breaker-events.js';
export { BREAKER_EVENT_NAMES } from './events/breaker-events.js';
export type {
  BreakerSnapshot,
  BreakerThresholds,
  BreakerTotals,
  BulkheadSnapshot,
  FailureSummary,
  RampUpSnapshot,
  HealthCheckSnapshot,
  HalfOpenSnapshot,
  TransitionEvidence,
  WindowSnapshot,
} from './snapshot/breaker-snapshot.js';
export type {
  BulkheadOptions,
  RampUpOptions,
  HealthCheckContext,
  HealthCheckOptions,
} from './recovery/recovery-options.interface.js';
export { HealthCheckScheduler } from './recovery/health-check-scheduler.js';
export type {
  HealthCheckSchedulerOptions,
  SchedulerTimers,
} from './recovery/health-check-scheduler.js';
export { withRetry } from './retry/retry.js';
export type { RetryingBreaker } from './retry/retry.js';
export { RETRY_DEFAULTS } from './retry/retry-options.js';
export type {
  RetryBackoffOptions,
  RetryBudgetOptions,
  RetryOptions,
} from './retry/retry-options.js';
export { BREAKER_STATES } from './state/breaker-state.js';
export type {
  BreakerState,
  CallOutcome,
  FailureCategory,
  ReconfigurationReset,
  RejectionReason,
  TransitionReason,
} from './state/breaker-state.js';
export { ConcurrencyLimiter } from './limit/concurrency-limiter.js';
export type { LimitPermit } from './limit/concurrency-limiter.js';
export { CRITICALITIES } from './limit/criticality.js';
export type { Criticality } from './limit/criticality.js';
export { LIMIT_DEFAULTS } from './limit/limit-options.js';
export type { ConcurrencyLimitOptions, LimitAlgorithmName } from './limit/limit-options.js';
export type { ConcurrencyLimitSnapshot } from './limit/limit-snapshot.js';
export type { RejectionCode } from './errors/breaker.errors.js';
export {
  BreakerConfigError,
  BreakerHookError,
  CallRejectedError,
  CallTimeoutError,
  isCallRejected,
} from './errors/breaker.errors.js';
export {
  defaultClassifyError,
  defaultClassifyResult,
  httpStatusOf,
  parseRetryAfter,
  retryAfterOf,
} from './classify/classify.js';
export type { ErrorClassifier, ResultClassifier } from './classify/classify.js';
export { ensureOk, UpstreamHttpError } from './classify/upstream-http.error.js';
export type { UpstreamBodyReader, UpstreamResponse } from './classify/upstream-http.error.js';
export { systemClock } from './ports/clock.js';
export type { Clock, RandomSource } from './ports/clock.js';
export type { ResolvedBreakerOptions } from './options/resolve-options.js';
export { FAMILY_DEFAULT_KEY, FAMILY_OVERFLOW_KEY } from './family/breaker-family.js';
export type { FamilySnapshot } from './family/breaker-family.js';
export type {
  BreakerCoordination,
  BreakerCoordinator,
  BreakerStore,
  CoordinatedBreaker,
} from './ports/breaker-coordinator.interface.js';
export type { ForcedMode, ForceOptions, ForcedStateSnapshot } from './state/forced-state.js';
export { InjectedFaultError } from './faults/injected-fault.error.js';
export type {
  FaultInjectionOptions,
  InjectedFault,
  InjectedFaultSnapshot,
} from './faults/fault-injection.js';
