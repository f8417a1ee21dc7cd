import { describe, expect, it } from 'vitest';
import { CIRCUIT_BREAKER_MODULE_OPTIONS, getCircuitBreakerToken } from '../lib/index.js';
import { CIRCUIT_BREAKER_TELEMETRY_OPTIONS } from '../lib/opentelemetry/circuit-breaker-telemetry.constants.js';
import { CIRCUIT_BREAKER_METRICS_OPTIONS } from '../lib/prometheus/circuit-breaker-metrics.constants.js';

// The token strings are part of the contract (CHANGELOG: namespaced, like 'THROTTLER:MODULE_OPTIONS'):
// changing one breaks applications that looked a provider up by its raw string.
describe('DI tokens', () => {
  it('are namespaced under CIRCUIT_BREAKER:', () => {
    expect(getCircuitBreakerToken('payments')).toBe('CIRCUIT_BREAKER:BREAKER:payments');
    expect(CIRCUIT_BREAKER_MODULE_OPTIONS).toBe('CIRCUIT_BREAKER:MODULE_OPTIONS');
    expect(CIRCUIT_BREAKER_METRICS_OPTIONS).toBe('CIRCUIT_BREAKER:METRICS_OPTIONS');
    expect(CIRCUIT_BREAKER_TELEMETRY_OPTIONS).toBe('CIRCUIT_BREAKER:TELEMETRY_OPTIONS');
  });
});
