import type { LogLevel } from '@nestjs/common';

/**
 * How transitions are logged (through Nest's `Logger`, context `CircuitBreaker`).
 *
 * @publicApi
 */
export interface CircuitBreakerLoggingOptions {
  /**
   * The least severe line written. Openings and isolations are `warn`, closings
   * and resets `log`, half-openings `debug`. Default `'log'`.
   */
  level?: Extract<LogLevel, 'verbose' | 'debug' | 'log' | 'warn'>;
  /**
   * At most this many lines per second; past it, a summary counts what was
   * left out (many per-key children can change state together). Default 10.
   */
  maxPerSecond?: number;
}

/**
 * Anything with `emit(event, payload)`, such as `EventEmitter2` from
 * `@nestjs/event-emitter` (no dependency on it is needed).
 *
 * @publicApi
 */
export interface CircuitBreakerEventSink {
  emit(event: string, payload: unknown): unknown;
}
