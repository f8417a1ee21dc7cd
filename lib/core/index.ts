export { Breaker } from './breaker.js';
export type { ExecuteOptions } from './breaker.js';
export type { BreakerDeps } from './breaker-environment.js';
export type { AdmissionPeek } from './breaker-peek.js';
export type { CallContext, CallPermit, ProtectedCall } from './tracked-call.js';
export { BREAKER_DEFAULTS } from './breaker-options.js';
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
} from './breaker-options.js';
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
  RecoveryProbeEvent,
  SlowCallEvent,
  StateChangeEvent,
  SuccessEvent,
  TimeoutEvent,
} from './breaker-events.js';
export { BREAKER_EVENT_NAMES } from './breaker-events.js';
export type {
  BreakerSnapshot,
  BreakerThresholds,
  BreakerTotals,
  BulkheadSnapshot,
  FailureSummary,
  RampUpSnapshot,
  RecoveryProbeSnapshot,
  HalfOpenSnapshot,
  TransitionEvidence,
  WindowSnapshot,
} from './breaker-snapshot.js';
export type {
  BulkheadOptions,
  RampUpOptions,
  RecoveryProbeContext,
  RecoveryProbeOptions,
  ResolvedRecoveryOptions,
} from './recovery-options.interface.js';
export { ProbeScheduler } from './probe-scheduler.js';
export type { ProbeSchedulerOptions, SchedulerTimers } from './probe-scheduler.js';
export { withRetry } from './retry/retry.js';
export type { RetryingBreaker } from './retry/retry.js';
export { RETRY_DEFAULTS } from './retry/retry-options.js';
export type {
  RetryBackoffOptions,
  RetryBudgetOptions,
  RetryOptions,
} from './retry/retry-options.js';
export { BREAKER_STATES } from './breaker-state.js';
export type {
  BreakerState,
  CallOutcome,
  FailureCategory,
  ReconfigurationReset,
  RejectionReason,
  TransitionReason,
} from './breaker-state.js';
export {
  BreakerConfigError,
  BreakerHookError,
  CallTimeoutError,
  CircuitOpenError,
  isBreakerRejection,
} from './breaker.errors.js';
export {
  defaultClassifyError,
  defaultClassifyResult,
  httpStatusOf,
  parseRetryAfter,
  retryAfterOf,
} from './classify.js';
export type { ErrorClassifier, ResultClassifier } from './classify.js';
export { ensureOk, UpstreamHttpError } from './upstream-http.error.js';
export type { UpstreamBodyReader, UpstreamResponse } from './upstream-http.error.js';
export { systemClock } from './clock.js';
export type { Clock, RandomSource } from './clock.js';
export type { ResolvedBreakerOptions } from './resolve-options.js';
export { OVERFLOW_KEY } from './breaker-family.js';
export type { FamilySnapshot } from './breaker-family.js';
export type {
  BreakerCoordination,
  BreakerCoordinator,
  BreakerStore,
  CoordinatedBreaker,
} from './breaker-coordinator.interface.js';
export type {
  ForceableState,
  ForcedMode,
  ForceOptions,
  ForcedStateSnapshot,
} from './forced-state.js';
export { InjectedFaultError } from './injected-fault.error.js';
export type {
  FaultInjectionOptions,
  InjectedFault,
  InjectedFaultSnapshot,
} from './fault-injection.js';
