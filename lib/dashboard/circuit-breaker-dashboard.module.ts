import { randomBytes } from 'node:crypto';
import { Module, type DynamicModule } from '@nestjs/common';
import { CircuitBreakerDashboardAccessGuard } from './circuit-breaker-dashboard-access.guard.js';
import type {
  CircuitBreakerDashboardAsyncOptions,
  CircuitBreakerDashboardOptions,
} from './circuit-breaker-dashboard-options.interface.js';
import {
  CIRCUIT_BREAKER_DASHBOARD_OPTIONS,
  CIRCUIT_BREAKER_DASHBOARD_PAGE,
} from './circuit-breaker-dashboard.constants.js';
import { dashboardControllers } from './circuit-breaker-dashboard.controller.js';
import { CircuitBreakerDashboardService } from './circuit-breaker-dashboard.service.js';
import {
  checkAsyncDefinition,
  resolveDashboardOptions,
  resolveFactoryOptions,
  type ResolvedDashboardOptions,
} from './dashboard-options.js';
import { dashboardPage, type DashboardPage } from './page/dashboard-page.js';

/**
 * A live page of every circuit breaker of the application, pushed over
 * Server-Sent Events: one tile per breaker with its state, rates, countdown
 * to the next probe and the evidence of its last transition; with
 * `control: true` (and a `guard`), buttons that force a breaker open or
 * closed and reset it. Import it beside `CircuitBreakerModule.forRoot()`;
 * without it, start-up fails with `CircuitBreakerModuleMissingError`.
 *
 * Protect it with `guard` (or a global guard) and never expose it on a
 * public listener: it shows every dependency and how it fails.
 *
 * @publicApi
 */
@Module({})
export class CircuitBreakerDashboardModule {
  static forRoot(given: CircuitBreakerDashboardOptions = {}): DynamicModule {
    const options = resolveDashboardOptions(given);
    if (!options.enabled) return { module: CircuitBreakerDashboardModule };
    return {
      module: CircuitBreakerDashboardModule,
      providers: [
        { provide: CIRCUIT_BREAKER_DASHBOARD_OPTIONS, useValue: options },
        { provide: CIRCUIT_BREAKER_DASHBOARD_PAGE, useValue: pageFor(options) },
        CircuitBreakerDashboardService,
      ],
      controllers: dashboardControllers(options),
      exports: [CircuitBreakerDashboardService],
    };
  }

  /**
   * The options from a factory (`ConfigService`...), checked at start-up as
   * `forRoot()` checks them. `path`, `control` and `maxPendingDataLength` are
   * given here, since they shape the routes; with `enabled: false` from the
   * factory, every route answers 404.
   */
  static forRootAsync(given: CircuitBreakerDashboardAsyncOptions): DynamicModule {
    const { routes, options } = checkAsyncDefinition(given);
    const { useFactory, inject = [], imports = [] } = options;
    return {
      module: CircuitBreakerDashboardModule,
      imports,
      providers: [
        {
          provide: CIRCUIT_BREAKER_DASHBOARD_OPTIONS,
          useFactory: async (...args: unknown[]) =>
            resolveFactoryOptions(await useFactory(...args), routes),
          inject,
        },
        {
          provide: CIRCUIT_BREAKER_DASHBOARD_PAGE,
          useFactory: pageFor,
          inject: [CIRCUIT_BREAKER_DASHBOARD_OPTIONS],
        },
        CircuitBreakerDashboardService,
      ],
      controllers: dashboardControllers({ ...routes, guard: CircuitBreakerDashboardAccessGuard }),
      exports: [CircuitBreakerDashboardService],
    };
  }
}

function pageFor(options: ResolvedDashboardOptions): DashboardPage {
  // One token per dashboard: only a page it served can read it. Without control, none is needed.
  const token = options.control ? randomBytes(24).toString('base64url') : '';
  return dashboardPage({ control: options.control, token, intervalMs: options.intervalMs });
}
