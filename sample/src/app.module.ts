import { HttpModule } from '@nestjs/axios';
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { CircuitBreakerModule, type Clock } from 'nestjs-circuit-breaker';
import { CircuitBreakerDashboardModule } from 'nestjs-circuit-breaker/dashboard';
import { CircuitBreakerMetricsModule } from 'nestjs-circuit-breaker/prometheus';
import { CircuitBreakerHealthModule } from 'nestjs-circuit-breaker/terminus';
import { BreakersController } from './breakers/breakers.controller.js';
import { CatalogController } from './catalog/catalog.controller.js';
import { CatalogService } from './catalog/catalog.service.js';
import { LoopbackGuard } from './dashboard/loopback.guard.js';
import { CheckoutController } from './checkout/checkout.controller.js';
import { HealthController } from './health/health.controller.js';
import { InventoryController } from './inventory/inventory.controller.js';
import { InventoryService } from './inventory/inventory.service.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { PricingController } from './pricing/pricing.controller.js';
import { PricingService } from './pricing/pricing.service.js';
import { BREAKER_DEFAULTS, BREAKERS, UPSTREAMS, type Upstreams } from './sample.config.js';
import { UpstreamHttpErrorFilter } from './upstream/upstream-http-error.filter.js';

@Module({})
export class AppModule {
  /**
   * `clock` lets the end-to-end tests move time instead of waiting for it;
   * `dashboard.control` puts the force and reset buttons on the dashboard (on by default here).
   */
  static register(
    upstreams: Upstreams,
    clock?: Clock,
    dashboard: { control?: boolean } = {},
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // httpFilter: CircuitOpenError → 503 + Retry-After, CallTimeoutError → 504, with bodies that name no breaker;
        // over the TCP microservice, the CIRCUIT_OPEN / CALL_TIMEOUT payload.
        CircuitBreakerModule.forRoot({
          defaults: BREAKER_DEFAULTS,
          breakers: BREAKERS,
          strict: true,
          httpFilter: true,
          clock,
        }),
        TerminusModule.forRoot({ logger: false }),
        CircuitBreakerHealthModule,
        CircuitBreakerMetricsModule.forRoot(),
        // The live page on /circuit-breakers, for this machine only.
        CircuitBreakerDashboardModule.forRoot({
          guard: LoopbackGuard,
          control: dashboard.control ?? true,
        }),
        HttpModule,
      ],
      controllers: [
        CatalogController,
        PricingController,
        InventoryController,
        CheckoutController,
        HealthController,
        BreakersController,
        MetricsController,
      ],
      providers: [
        { provide: UPSTREAMS, useValue: upstreams },
        // Upstream error statuses thrown by ensureOk(): 400/404 passed on, a pause as 503 + Retry-After, the rest 502.
        { provide: APP_FILTER, useClass: UpstreamHttpErrorFilter },
        CatalogService,
        PricingService,
        InventoryService,
      ],
    };
  }
}
