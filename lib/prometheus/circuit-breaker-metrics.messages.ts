import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import { describeValue } from '../core/options/option.messages.js';

const MODULE = 'CircuitBreakerMetricsModule';

/**
 * Every text the Prometheus integration shows a person: errors name the option
 * or the metric and end with what to do; `help` holds the metrics' HELP lines.
 *
 * @internal
 */
export const circuitBreakerMetricsMessages = {
  /** The subject of option errors, and the module the missing-module error names. */
  module: MODULE,
  moduleMissing: () => circuitBreakerMessages.integrationWithoutModule(MODULE),
  notAnObject: (value: unknown) =>
    `${MODULE}.forRoot() takes an options object ({ registry?, prefix?, keyLabel? }), got ${describeValue(value)}. ` +
    `Pass an object, e.g. ${MODULE}.forRoot({ prefix: 'shop_' }), or nothing for the defaults.`,
  expectedRegistry: 'a prom-client Registry',
  expectedPrefix: 'a string of letters, digits, _ and : that does not start with a digit',
  conflictingMetric: (name: string, found: string, wanted: string) =>
    `${MODULE}: the registry already holds a metric "${name}" (${found}), but this module needs ${wanted}. ` +
    `Give every ${MODULE}.forRoot() that shares a registry the same keyLabel, or a different prefix.`,
  /** How a metric is shown in `conflictingMetric`. */
  metricShape: (type: string, labelNames: readonly string[]) =>
    `${type} with labels ${labelNames.length === 0 ? '(none)' : labelNames.join(', ')}`,
  help: {
    forced:
      'Set to 1 while force() holds the circuit breaker, with the forced mode (open, metrics-only, disabled); absent otherwise. The reason is in the snapshot, the health details and the logs.',
    shared:
      'Set to 1 while the circuit breaker shares its state with the other replicas through the store, 0 while the store is unreachable and it decides alone; absent for breakers that do not share.',
    state:
      'Whether the circuit breaker is in this state (1) or not (0); open and isolated breakers reject every call, half-open ones all but their probes; metrics-only and disabled ones admit every call.',
    windowFailureRate:
      'Failures (timeouts included) among the calls in the circuit breaker window, as a ratio from 0 to 1: the rate a failureRateThreshold opens on.',
    windowCalls:
      'Calls counted in the circuit breaker window (successes and failures, not overloads or ignored calls); no rate is judged below its minimum throughput.',
    calls:
      'Calls through the circuit breaker, each counted once, by outcome: success, failure, timeout, overload, ignored, ' +
      'rejected (not attempted; reason says why). Fallbacks served are counted in circuit_breaker_fallbacks_total.',
    fallbacks:
      'Calls answered by a fallback instead of their outcome (already counted in circuit_breaker_calls_total as rejected, failure, timeout or overload), ' +
      'by source: method, function, observable (the circuitBreaker() operator), lastGood.',
    transitions: 'State changes of the circuit breaker.',
    retries:
      'Retries of a retry policy through the circuit breaker (withRetry() or the decorator retry option), by result: scheduled, or budget-exhausted (the retry budget refused it and the caller got the failure).',
    healthChecks:
      'Active health checks (the healthCheck option, run while the circuit breaker is open) by result: succeeded (the breaker moved on) or failed.',
    bulkheadCalls:
      'Calls holding a slot of the circuit breaker bulkhead (state="active") and waiting for one (state="queued"); only breakers with a bulkhead have series.',
    probes:
      'Half-open probe calls by result: admitted, then succeeded, failed, released (outcome ignored, permit returned) or abandoned (still in flight when their round ended).',
    keys:
      'For a per-key circuit breaker family: how many of the children it holds (one per target) are in each state, without a label per key. ' +
      'A tenant outage shows here while the family itself stays closed.',
    configGeneration:
      'The generation of the circuit breaker options in force: 1 for the options first in force, one more for each reconfiguration (reconfigure(), a fleet reconfiguration, a reload), counted as it happens.',
    configInfo:
      'Always 1; its labels are the thresholds in force (window, failure_rate_threshold, minimum_throughput, consecutive_failures, slow_call_duration_ms, slow_call_rate_threshold, timeout_ms, open_duration_ms; empty when unset). ' +
      'One series per circuit breaker, replaced when a reconfiguration changes them.',
    limit:
      'How many requests a concurrency limiter (forRoot({ limiters })) lets run at once now, as its algorithm found it.',
    limitRequests:
      'Requests holding a place of a concurrency limiter (state="in_flight") and waiting for one (state="queued").',
    limitShed:
      'Requests a concurrency limiter shed (refused, timed out in its queue, or sent out of it for a more important one), by criticality.',
    callDuration:
      'Duration of the calls the circuit breaker let through, in seconds, whatever their outcome (success, failure, timeout, overload) except ignored.',
  },
};
