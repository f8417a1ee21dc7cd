/**
 * Every text the Prometheus integration shows a person: each names the option
 * or the metric and says what to do.
 *
 * @internal
 */
export const circuitBreakerMetricsMessages = {
  notAnObject: (value: unknown) => `CircuitBreakerMetricsModule.forRoot() takes an options object, got ${value === null ? 'null' : typeof value}.`,
  unknownOption: (option: string, known: readonly string[]) =>
    `CircuitBreakerMetricsModule: unknown option "${option}". Known options: ${known.join(', ')}.`,
  invalidOption: (option: string, expected: string, value: unknown) =>
    `CircuitBreakerMetricsModule: option "${option}" must be ${expected}, got ${typeof value === 'string' ? JSON.stringify(value) : value === null ? 'null' : typeof value}.`,
  conflictingMetric: (name: string, found: string, wanted: string) =>
    `CircuitBreakerMetricsModule: the registry already holds a metric "${name}" (${found}), but this module needs ${wanted}. ` +
    'Give every CircuitBreakerMetricsModule.forRoot() that shares a registry the same keyLabel, or a different prefix.',
};
