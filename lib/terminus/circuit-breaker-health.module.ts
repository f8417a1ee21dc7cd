import { Module } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { CircuitBreakerHealthIndicator } from './circuit-breaker.health.js';

/**
 * Provides `CircuitBreakerHealthIndicator`. Import it beside `TerminusModule`
 * and `CircuitBreakerModule.forRoot()`; without the latter, start-up fails
 * with `CircuitBreakerModuleMissingError`.
 *
 * @publicApi
 */
@Module({
  providers: [HealthIndicatorService, CircuitBreakerHealthIndicator],
  exports: [CircuitBreakerHealthIndicator],
})
export class CircuitBreakerHealthModule {}
