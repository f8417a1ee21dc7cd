import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import { describeValue } from '../core/options/option.messages.js';

const MODULE = 'CircuitBreakerTelemetryModule';

/**
 * Every text the OpenTelemetry integration shows a person: errors name the
 * option and end with what to do; `descriptions` holds the instruments'.
 *
 * @internal
 */
export const circuitBreakerTelemetryMessages = {
  /** The subject of option errors, and the module the missing-module error names. */
  module: MODULE,
  moduleMissing: () => circuitBreakerMessages.integrationWithoutModule(MODULE),
  notAnObject: (value: unknown) =>
    `${MODULE}.forRoot() takes an options object ({ meterProvider?, keyAttribute? }), got ${describeValue(value)}. ` +
    `Pass an object, e.g. ${MODULE}.forRoot({ keyAttribute: false }), or nothing for the defaults.`,
  expectedMeterProvider: 'an OpenTelemetry MeterProvider (with getMeter())',
  descriptions: {
    calls:
      'Calls through the circuit breaker, each counted once, by outcome: success, failure, timeout, overload, ignored, ' +
      'rejected (not attempted; circuit_breaker.rejection.reason says why). Fallbacks served are counted in circuit_breaker.fallbacks.',
    fallbacks:
      'Calls answered by a fallback instead of their outcome (already counted in circuit_breaker.calls as rejected, failure, timeout or overload), ' +
      'by circuit_breaker.fallback.source: method, function, observable (the circuitBreaker() operator), lastGood.',
    transitions: 'State changes of the circuit breaker.',
    probes:
      'Half-open probe calls by result: admitted, then succeeded, failed, released (outcome ignored, permit returned) or abandoned (still in flight when their round ended).',
    callDuration:
      'Duration of the calls the circuit breaker let through, whatever their outcome (success, failure, timeout, overload) except ignored.',
    forced:
      'Set to 1 while force() holds the circuit breaker, with the forced mode (open, metrics-only, disabled); not reported otherwise. The reason is in the snapshot, the health details and the logs.',
    state:
      'Whether the circuit breaker is in this state (1) or not (0); open and isolated breakers reject every call, half-open ones all but their probes; metrics-only and disabled ones admit every call.',
    windowFailureRate:
      'Failures (timeouts included) among the calls in the circuit breaker window, as a ratio from 0 to 1: the rate a failureRateThreshold opens on.',
    retries:
      'Retries of a retry policy through the circuit breaker (withRetry() or the decorator retry option), by result: scheduled, or budget-exhausted (refused by the retry budget).',
    healthChecks:
      'Active health checks (the healthCheck option, run while the circuit breaker is open) by result: succeeded or failed.',
    limit:
      'How many requests a concurrency limiter (forRoot({ limiters })) lets run at once now, as its algorithm found it.',
    limitRequests:
      'Requests holding a place of a concurrency limiter (in_flight) and waiting for one (queued).',
    limitShed:
      'Requests a concurrency limiter shed (refused, timed out in its queue, or sent out of it for a more important one), by criticality.',
    bulkheadCalls:
      'Calls holding a slot of the circuit breaker bulkhead (active) and waiting for one (queued); only breakers with a bulkhead report it.',
    windowCalls:
      'Calls counted in the circuit breaker window (successes and failures, not overloads or ignored calls); no rate is judged below its minimum throughput.',
    keys: 'For a per-key circuit breaker family: how many of the children it holds (one per target) are in each state, without an attribute per key.',
    configGeneration:
      'The generation of the circuit breaker options in force: 1 for the options first in force, one more for each reconfiguration, counted as it happens.',
    configInfo:
      'Always 1; its circuit_breaker.config.* attributes are the thresholds in force (window, failure_rate_threshold, minimum_throughput, consecutive_failures, slow_call_duration_ms, slow_call_rate_threshold, timeout_ms, open_duration_ms; absent when unset).',
  },
};
