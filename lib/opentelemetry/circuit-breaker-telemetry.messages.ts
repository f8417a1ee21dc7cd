/**
 * Every text the OpenTelemetry integration shows a person: each names the
 * option and says what it must be.
 *
 * @internal
 */
export const circuitBreakerTelemetryMessages = {
  notAnObject: (value: unknown) => `CircuitBreakerTelemetryModule.forRoot() takes an options object, got ${value === null ? 'null' : typeof value}.`,
  unknownOption: (option: string, known: readonly string[]) =>
    `CircuitBreakerTelemetryModule: unknown option "${option}". Known options: ${known.join(', ')}.`,
  invalidOption: (option: string, expected: string, value: unknown) =>
    `CircuitBreakerTelemetryModule: option "${option}" must be ${expected}, got ${typeof value === 'string' ? JSON.stringify(value) : value === null ? 'null' : typeof value}.`,
};
