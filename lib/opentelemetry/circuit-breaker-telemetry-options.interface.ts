import type { MeterProvider } from '@opentelemetry/api';

/**
 * Options of `CircuitBreakerTelemetryModule.forRoot()`.
 *
 * @publicApi
 */
export interface CircuitBreakerTelemetryOptions {
  /**
   * Where the instruments come from. Default: the global provider,
   * `metrics.getMeterProvider()` of `@opentelemetry/api`, read when the module
   * starts: register the SDK before bootstrapping Nest. Without an SDK it is a
   * no-op and recording costs next to nothing.
   */
  meterProvider?: MeterProvider;
  /**
   * Adds a `circuit_breaker.key` attribute with the target of each child of a
   * per-key family. Off by default: keys often come from request data, and
   * every key is a new stream of every instrument. The observed instruments
   * report held children only (at most `perKey.maxKeys` per family); the
   * counters and the histogram keep an evicted key's streams under cumulative
   * temporality (the API cannot forget an attribute set; the SDK's cardinality
   * limit caps them), and drop them under delta temporality. Off, children are
   * counted under their family's name.
   */
  keyAttribute?: boolean;
  /**
   * Records each refusal and each transition as an event of the active span
   * (`CIRCUIT_BREAKER_SPAN_EVENTS`), and marks the span of a refused call with
   * the breaker, `circuit_breaker.decision: 'rejected'` and the reason. Nothing
   * is recorded without an active recording span (no SDK, no tracer, or a call
   * made outside any span). Default `true`.
   */
  traces?: boolean;
}
