import { Module, type DynamicModule } from '@nestjs/common';
import type { CircuitBreakerTelemetryOptions } from './circuit-breaker-telemetry-options.interface.js';
import { CIRCUIT_BREAKER_TELEMETRY_OPTIONS } from './circuit-breaker-telemetry.constants.js';
import { circuitBreakerTelemetryMessages as messages } from './circuit-breaker-telemetry.messages.js';
import { CircuitBreakerTelemetryService } from './circuit-breaker-telemetry.service.js';

const KNOWN_OPTIONS = ['meterProvider', 'keyAttribute'];

/**
 * OpenTelemetry metrics of every circuit breaker of the application, through
 * `@opentelemetry/api`. Import it beside `CircuitBreakerModule.forRoot()`
 * (whose registry it needs: keep that module global, the default).
 *
 * @publicApi
 */
@Module({})
export class CircuitBreakerTelemetryModule {
  static forRoot(options: CircuitBreakerTelemetryOptions = {}): DynamicModule {
    validateOptions(options);
    return {
      module: CircuitBreakerTelemetryModule,
      providers: [{ provide: CIRCUIT_BREAKER_TELEMETRY_OPTIONS, useValue: options }, CircuitBreakerTelemetryService],
    };
  }
}

function validateOptions(options: CircuitBreakerTelemetryOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(messages.notAnObject(options));
  for (const key of Object.keys(options)) if (!KNOWN_OPTIONS.includes(key)) throw new TypeError(messages.unknownOption(key, KNOWN_OPTIONS));
  const { meterProvider, keyAttribute } = options;
  if (meterProvider !== undefined && (typeof meterProvider !== 'object' || meterProvider === null || typeof meterProvider.getMeter !== 'function')) {
    throw new TypeError(messages.invalidOption('meterProvider', 'an OpenTelemetry MeterProvider (with getMeter())', meterProvider));
  }
  if (keyAttribute !== undefined && typeof keyAttribute !== 'boolean') throw new TypeError(messages.invalidOption('keyAttribute', 'a boolean', keyAttribute));
}
