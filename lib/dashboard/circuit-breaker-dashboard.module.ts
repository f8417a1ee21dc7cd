import { randomBytes } from 'node:crypto';
import { Module, type DynamicModule } from '@nestjs/common';
import type { CircuitBreakerDashboardOptions } from './circuit-breaker-dashboard-options.interface.js';
import { CIRCUIT_BREAKER_DASHBOARD_OPTIONS } from './circuit-breaker-dashboard.constants.js';
import { dashboardControllers } from './circuit-breaker-dashboard.controller.js';
import { CircuitBreakerDashboardService } from './circuit-breaker-dashboard.service.js';
import { resolveDashboardOptions } from './dashboard-options.js';
import { dashboardPage } from './page/dashboard-page.js';

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
    // One token per forRoot(): only a page served by this application can read it. Without control, none is needed.
    const token = options.control ? randomBytes(24).toString('base64url') : '';
    const page = dashboardPage({
      control: options.control,
      token,
      intervalMs: options.intervalMs,
    });
    return {
      module: CircuitBreakerDashboardModule,
      providers: [
        { provide: CIRCUIT_BREAKER_DASHBOARD_OPTIONS, useValue: options },
        CircuitBreakerDashboardService,
      ],
      controllers: dashboardControllers(options, page, token),
      exports: [CircuitBreakerDashboardService],
    };
  }
}
