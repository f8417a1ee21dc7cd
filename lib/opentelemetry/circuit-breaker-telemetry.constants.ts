import { CALL_DURATION_BOUNDS_SECONDS } from '../metrics/breaker-measurements.js';
/** DI token of the options of `CircuitBreakerTelemetryModule.forRoot()`, namespaced like every token of the package. @internal */
export const CIRCUIT_BREAKER_TELEMETRY_OPTIONS = 'CIRCUIT_BREAKER:TELEMETRY_OPTIONS';

/** The instrumentation scope: the meter is named after the package. @publicApi */
export const CIRCUIT_BREAKER_METER_NAME = 'nestjs-circuit-breaker';

/** Instrument names, in the dot-separated style of the OpenTelemetry semantic conventions. @publicApi */
export const CIRCUIT_BREAKER_INSTRUMENTS = Object.freeze({
  state: 'circuit_breaker.state',
  forced: 'circuit_breaker.forced',
  calls: 'circuit_breaker.calls',
  fallbacks: 'circuit_breaker.fallbacks',
  transitions: 'circuit_breaker.transitions',
  callDuration: 'circuit_breaker.call.duration',
  windowFailureRate: 'circuit_breaker.window.failure_rate',
  windowCalls: 'circuit_breaker.window.calls',
  probes: 'circuit_breaker.probes',
  bulkheadCalls: 'circuit_breaker.bulkhead.calls',
  retries: 'circuit_breaker.retries',
  healthChecks: 'circuit_breaker.health_checks',
  keys: 'circuit_breaker.keys',
  configGeneration: 'circuit_breaker.config.generation',
  configInfo: 'circuit_breaker.config.info',
  limit: 'circuit_breaker.limit',
  limitRequests: 'circuit_breaker.limit.requests',
  limitShed: 'circuit_breaker.limit.shed',
});

/** Attribute names. @publicApi */
export const CIRCUIT_BREAKER_ATTRIBUTES = Object.freeze({
  name: 'circuit_breaker.name',
  key: 'circuit_breaker.key',
  state: 'circuit_breaker.state',
  forcedState: 'circuit_breaker.forced.state',
  outcome: 'circuit_breaker.outcome',
  rejectionReason: 'circuit_breaker.rejection.reason',
  fallbackSource: 'circuit_breaker.fallback.source',
  transitionFrom: 'circuit_breaker.transition.from',
  transitionTo: 'circuit_breaker.transition.to',
  transitionReason: 'circuit_breaker.transition.reason',
  /** On a span: what the breaker decided for the call it was part of (`rejected`). */
  decision: 'circuit_breaker.decision',
  retryAfterMs: 'circuit_breaker.retry_after_ms',
  probeResult: 'circuit_breaker.probe.result',
  bulkheadState: 'circuit_breaker.bulkhead.state',
  retryResult: 'circuit_breaker.retry.result',
  healthCheckResult: 'circuit_breaker.health_check.result',
  /** Of `circuit_breaker.limit.requests`: `in_flight` or `queued`. */
  limitState: 'circuit_breaker.limit.state',
  /** Of `circuit_breaker.limit.shed`: the shed requests' criticality. */
  criticality: 'circuit_breaker.criticality',
  /** Of `circuit_breaker.config.info`: each threshold in force is `circuit_breaker.config.<threshold>` (`window`, `failure_rate_threshold`...). */
  configPrefix: 'circuit_breaker.config.',
});

/**
 * The span events breakers record on the active span (see the `traces` option):
 * a refused call, and a transition (made during the call that made it due).
 *
 * @publicApi
 */
export const CIRCUIT_BREAKER_SPAN_EVENTS = Object.freeze({
  rejected: 'circuit_breaker.rejected',
  stateChange: 'circuit_breaker.state_change',
});

/**
 * Advised bucket boundaries of the call duration histogram, in seconds: those
 * the semantic conventions advise for HTTP client durations, which suit remote
 * calls of a few milliseconds to a timeout of several seconds. A View can
 * override them.
 *
 * @publicApi
 */
export const CALL_DURATION_BOUNDARIES: readonly number[] = CALL_DURATION_BOUNDS_SECONDS;
