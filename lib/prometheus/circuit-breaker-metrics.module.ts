import { Module, type DynamicModule } from '@nestjs/common';
import { OptionChecker } from '../core/options/option-checker.js';
import type { CircuitBreakerMetricsOptions } from './circuit-breaker-metrics-options.interface.js';
import {
  CIRCUIT_BREAKER_METRICS_OPTIONS,
  METRIC_NAME_PREFIX,
} from './circuit-breaker-metrics.constants.js';
import { circuitBreakerMetricsMessages as messages } from './circuit-breaker-metrics.messages.js';
import { CircuitBreakerMetricsService } from './circuit-breaker-metrics.service.js';

const KNOWN_OPTIONS = ['registry', 'prefix', 'keyLabel'];

/**
 * Prometheus metrics of every circuit breaker of the application, through
 * prom-client. Import it beside `CircuitBreakerModule.forRoot()` (whose
 * registry it needs: keep that module global, the default). Without it,
 * start-up fails with `CircuitBreakerModuleMissingError`.
 *
 * @publicApi
 */
@Module({})
export class CircuitBreakerMetricsModule {
  static forRoot(given: CircuitBreakerMetricsOptions = {}): DynamicModule {
    const options = validateOptions(given);
    return {
      module: CircuitBreakerMetricsModule,
      providers: [
        { provide: CIRCUIT_BREAKER_METRICS_OPTIONS, useValue: options },
        CircuitBreakerMetricsService,
      ],
    };
  }
}

/** Checks every option and returns them as a plain copy, read once. */
function validateOptions(given: CircuitBreakerMetricsOptions): CircuitBreakerMetricsOptions {
  const check = new OptionChecker(messages.module);
  if (!check.isPlainObject('options', given)) throw new TypeError(messages.notAnObject(given));
  const options = check.record('', given, KNOWN_OPTIONS);
  if (options.registry !== undefined)
    check.service('registry', options.registry, ['getSingleMetric'], messages.expectedRegistry);
  if (options.prefix !== undefined) {
    check.string('prefix', options.prefix, messages.expectedPrefix, (prefix) =>
      METRIC_NAME_PREFIX.test(prefix),
    );
  }
  if (options.keyLabel !== undefined) check.boolean('keyLabel', options.keyLabel);
  return options as CircuitBreakerMetricsOptions;
}
