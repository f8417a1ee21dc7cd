import { Module, type DynamicModule } from '@nestjs/common';
import type { CircuitBreakerMetricsOptions } from './circuit-breaker-metrics-options.interface.js';
import { CIRCUIT_BREAKER_METRICS_OPTIONS, METRIC_NAME_PREFIX } from './circuit-breaker-metrics.constants.js';
import { circuitBreakerMetricsMessages as messages } from './circuit-breaker-metrics.messages.js';
import { CircuitBreakerMetricsService } from './circuit-breaker-metrics.service.js';

const KNOWN_OPTIONS = ['registry', 'prefix', 'keyLabel'];

/**
 * Prometheus metrics of every circuit breaker of the application, through
 * prom-client. Import it beside `CircuitBreakerModule.forRoot()` (whose
 * registry it needs: keep that module global, the default).
 *
 * @publicApi
 */
@Module({})
export class CircuitBreakerMetricsModule {
  static forRoot(options: CircuitBreakerMetricsOptions = {}): DynamicModule {
    validateOptions(options);
    return {
      module: CircuitBreakerMetricsModule,
      providers: [{ provide: CIRCUIT_BREAKER_METRICS_OPTIONS, useValue: options }, CircuitBreakerMetricsService],
    };
  }
}

function validateOptions(options: CircuitBreakerMetricsOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(messages.notAnObject(options));
  for (const key of Object.keys(options)) if (!KNOWN_OPTIONS.includes(key)) throw new TypeError(messages.unknownOption(key, KNOWN_OPTIONS));
  const { registry, prefix, keyLabel } = options;
  if (registry !== undefined && (typeof registry !== 'object' || registry === null || typeof registry.getSingleMetric !== 'function')) {
    throw new TypeError(messages.invalidOption('registry', 'a prom-client Registry', registry));
  }
  if (prefix !== undefined && (typeof prefix !== 'string' || !METRIC_NAME_PREFIX.test(prefix))) {
    throw new TypeError(messages.invalidOption('prefix', 'a string of letters, digits, _ and : that does not start with a digit', prefix));
  }
  if (keyLabel !== undefined && typeof keyLabel !== 'boolean') throw new TypeError(messages.invalidOption('keyLabel', 'a boolean', keyLabel));
}
