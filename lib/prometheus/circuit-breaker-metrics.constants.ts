import { CALL_DURATION_BOUNDS_SECONDS, MEASURED_STATES } from '../metrics/breaker-measurements.js';
import type { BreakerState } from '../core/index.js';

/** DI token of the options of `CircuitBreakerMetricsModule.forRoot()`, namespaced like every token of the package. @internal */
export const CIRCUIT_BREAKER_METRICS_OPTIONS = 'CIRCUIT_BREAKER:METRICS_OPTIONS';

/** Metric names before the prefix. @publicApi */
export const CIRCUIT_BREAKER_METRIC_NAMES = Object.freeze({
  state: 'circuit_breaker_state',
  forced: 'circuit_breaker_forced',
  shared: 'circuit_breaker_shared',
  calls: 'circuit_breaker_calls_total',
  fallbacks: 'circuit_breaker_fallbacks_total',
  transitions: 'circuit_breaker_transitions_total',
  callDuration: 'circuit_breaker_call_duration_seconds',
  windowFailureRate: 'circuit_breaker_window_failure_rate',
  windowCalls: 'circuit_breaker_window_calls',
  probes: 'circuit_breaker_probes_total',
  bulkheadCalls: 'circuit_breaker_bulkhead_calls',
  retries: 'circuit_breaker_retries_total',
  healthChecks: 'circuit_breaker_health_checks_total',
  keys: 'circuit_breaker_keys',
  configGeneration: 'circuit_breaker_config_generation',
  configInfo: 'circuit_breaker_config_info',
  limit: 'circuit_breaker_limit',
  limitRequests: 'circuit_breaker_limit_requests',
  limitShed: 'circuit_breaker_limit_shed_total',
});

/**
 * Upper bounds of the call duration histogram, in seconds: the boundaries
 * OpenTelemetry advises for HTTP client durations, which suit remote calls of
 * a few milliseconds to a timeout of several seconds.
 *
 * @publicApi
 */
export const CALL_DURATION_BUCKETS: readonly number[] = CALL_DURATION_BOUNDS_SECONDS;

/** Every state, so that the state gauge has a series per state and `== 1` queries always find one. @internal */
export const BREAKER_STATES: readonly BreakerState[] = MEASURED_STATES;

/** What a prefix may be: it must keep every metric name valid. @internal */
export const METRIC_NAME_PREFIX = /^(?:[a-zA-Z_:][a-zA-Z0-9_:]*)?$/;
