import { describeValue } from '../core/option.messages.js';

/**
 * Every text the Prometheus integration shows a person: each names the option
 * or the metric and says what to do.
 *
 * @internal
 */
export const circuitBreakerMetricsMessages = {
  notAnObject: (value: unknown) =>
    `CircuitBreakerMetricsModule.forRoot() takes an options object ({ registry?, prefix?, keyLabel? }), got ${describeValue(value)}.`,
  conflictingMetric: (name: string, found: string, wanted: string) =>
    `CircuitBreakerMetricsModule: the registry already holds a metric "${name}" (${found}), but this module needs ${wanted}. ` +
    'Give every CircuitBreakerMetricsModule.forRoot() that shares a registry the same keyLabel, or a different prefix.',
};
