// nestjs-circuit-breaker/prometheus: needs the optional peer prom-client ^15.
export { CircuitBreakerMetricsModule } from './circuit-breaker-metrics.module.js';
export { CircuitBreakerMetricsService } from './circuit-breaker-metrics.service.js';
export {
  CALL_DURATION_BUCKETS,
  CIRCUIT_BREAKER_METRIC_NAMES,
} from './circuit-breaker-metrics.constants.js';
export type { CircuitBreakerMetricsOptions } from './circuit-breaker-metrics-options.interface.js';
