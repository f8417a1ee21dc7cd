// nestjs-circuit-breaker/dashboard: needs nothing beyond @nestjs/common, @nestjs/core and rxjs.
export { CircuitBreakerDashboardModule } from './circuit-breaker-dashboard.module.js';
export { CircuitBreakerDashboardService } from './circuit-breaker-dashboard.service.js';
export {
  CIRCUIT_BREAKER_DASHBOARD_DEFAULTS,
  CIRCUIT_BREAKER_DASHBOARD_TOKEN_HEADER,
} from './circuit-breaker-dashboard.constants.js';
export type {
  CircuitBreakerDashboardAsyncOptions,
  CircuitBreakerDashboardFactoryOptions,
  CircuitBreakerDashboardGuard,
  CircuitBreakerDashboardOptions,
} from './circuit-breaker-dashboard-options.interface.js';
export type {
  DashboardAggregate,
  DashboardBreaker,
  DashboardChild,
  DashboardChildTransition,
  DashboardFleet,
  DashboardFleetView,
  DashboardState,
  DashboardTransition,
  DashboardTransitions,
} from './dashboard-view.interface.js';
export type { FleetBreaker, FleetReplica, FleetView } from '../interfaces/fleet-view.interface.js';
