import { circuitBreakerMessages } from '../circuit-breaker.messages.js';

const MODULE = 'CircuitBreakerHealthModule';

/**
 * Every text the terminus integration shows a person: each names what is wrong
 * and ends with what to do.
 *
 * @internal
 */
export const circuitBreakerHealthMessages = {
  module: MODULE,
  moduleMissing: () => circuitBreakerMessages.integrationWithoutModule(MODULE),
  /** The subject of option errors: the call, with its key when it is a string. */
  subject: (key: unknown) =>
    `CircuitBreakerHealthIndicator.isHealthy(${typeof key === 'string' ? JSON.stringify(key) : '...'})`,
  expectedKey: 'a non-empty string',
  expectedOptions:
    '{ breakers?, limiters?, openStatus?, forcedOpenStatus?, halfOpenStatus?, sheddingStatus?, details? }',
  expectedBreakers: 'an array of breaker names',
  expectedBreakerName: 'a non-empty string',
  expectedLimiters: 'an array of concurrency limiter names',
  unknownBreakers: (names: readonly string[]) =>
    `Unknown circuit breakers: ${names.map((n) => `"${n}"`).join(', ')}. Check the names given to isHealthy({ breakers }) against CircuitBreakerModule's breakers.`,
  unknownLimiters: (names: readonly string[]) =>
    `Unknown concurrency limiters: ${names.map((n) => `"${n}"`).join(', ')}. Check the names given to isHealthy({ limiters }) against CircuitBreakerModule's limiters.`,
};
