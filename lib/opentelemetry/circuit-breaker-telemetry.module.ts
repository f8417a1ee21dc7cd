import { Module, type DynamicModule } from '@nestjs/common';
import { OptionChecker } from '../core/options/option-checker.js';
import type { CircuitBreakerTelemetryOptions } from './circuit-breaker-telemetry-options.interface.js';
import { CIRCUIT_BREAKER_TELEMETRY_OPTIONS } from './circuit-breaker-telemetry.constants.js';
import { circuitBreakerTelemetryMessages as messages } from './circuit-breaker-telemetry.messages.js';
import { CircuitBreakerTelemetryService } from './circuit-breaker-telemetry.service.js';

const KNOWN_OPTIONS = ['meterProvider', 'keyAttribute', 'traces'];

/**
 * OpenTelemetry metrics of every circuit breaker of the application, through
 * `@opentelemetry/api`. Import it beside `CircuitBreakerModule.forRoot()`
 * (whose registry it needs: keep that module global, the default). Without
 * it, start-up fails with `CircuitBreakerModuleMissingError`.
 *
 * @publicApi
 */
@Module({})
export class CircuitBreakerTelemetryModule {
  static forRoot(given: CircuitBreakerTelemetryOptions = {}): DynamicModule {
    const options = validateOptions(given);
    return {
      module: CircuitBreakerTelemetryModule,
      providers: [
        { provide: CIRCUIT_BREAKER_TELEMETRY_OPTIONS, useValue: options },
        CircuitBreakerTelemetryService,
      ],
    };
  }
}

/** Checks every option and returns them as a plain copy, read once. */
function validateOptions(given: CircuitBreakerTelemetryOptions): CircuitBreakerTelemetryOptions {
  const check = new OptionChecker(messages.module);
  if (!check.isPlainObject('options', given)) throw new TypeError(messages.notAnObject(given));
  const options = check.record('', given, KNOWN_OPTIONS);
  if (options.meterProvider !== undefined)
    check.service(
      'meterProvider',
      options.meterProvider,
      ['getMeter'],
      messages.expectedMeterProvider,
    );
  if (options.keyAttribute !== undefined) check.boolean('keyAttribute', options.keyAttribute);
  if (options.traces !== undefined) check.boolean('traces', options.traces);
  return options as CircuitBreakerTelemetryOptions;
}
