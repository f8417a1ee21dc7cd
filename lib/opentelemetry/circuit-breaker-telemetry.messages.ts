import { describeValue } from '../core/option.messages.js';

/**
 * Every text the OpenTelemetry integration shows a person: each names the
 * option and says what it must be.
 *
 * @internal
 */
export const circuitBreakerTelemetryMessages = {
  notAnObject: (value: unknown) =>
    `CircuitBreakerTelemetryModule.forRoot() takes an options object ({ meterProvider?, keyAttribute? }), got ${describeValue(value)}.`,
};
