// nestjs-circuit-breaker/opentelemetry: needs the optional peer @opentelemetry/api ^1.9.
export { CircuitBreakerTelemetryModule } from './circuit-breaker-telemetry.module.js';
export { CircuitBreakerTelemetryService } from './circuit-breaker-telemetry.service.js';
export {
  CALL_DURATION_BOUNDARIES,
  CIRCUIT_BREAKER_ATTRIBUTES,
  CIRCUIT_BREAKER_INSTRUMENTS,
  CIRCUIT_BREAKER_METER_NAME,
  CIRCUIT_BREAKER_SPAN_EVENTS,
} from './circuit-breaker-telemetry.constants.js';
export type { CircuitBreakerTelemetryOptions } from './circuit-breaker-telemetry-options.interface.js';
