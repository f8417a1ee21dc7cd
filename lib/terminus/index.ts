// nestjs-circuit-breaker/terminus: needs the optional peer @nestjs/terminus ^12.
export { CircuitBreakerHealthModule } from './circuit-breaker-health.module.js';
export { CircuitBreakerHealthIndicator } from './circuit-breaker.health.js';
export type {
  CircuitBreakerHealthDetails,
  CircuitBreakerLimiterHealthDetails,
} from './circuit-breaker.health.js';
export type {
  CircuitBreakerHealthStatus,
  CircuitBreakerHealthOptions,
} from './circuit-breaker-health-options.interface.js';
