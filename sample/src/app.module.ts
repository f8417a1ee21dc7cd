import { HttpModule, HttpService } from '@nestjs/axios';
import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { CircuitBreakerModule } from 'nestjs-circuit-breaker';
import { provideAxiosCircuitBreaker } from 'nestjs-circuit-breaker/axios';
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
import { warehouseDispatcher } from './inventory/warehouse.dispatcher.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { PricingController } from './pricing/pricing.controller.js';
import { PricingService } from './pricing/pricing.service.js';
import { CIRCUIT_BREAKER_ASYNC_OPTIONS } from './breakers/circuit-breaker.config.js';
import { UPSTREAMS, type Upstreams } from './sample.config.js';
import { UpstreamHttpErrorFilter } from './upstream/upstream-http-error.filter.js';

@Module({})
export class AppModule {
  /**
   * `breakers`: the circuit breaker module, by default
   * `CircuitBreakerModule.forRootAsync()` over `@nestjs/config`; the end-to-end
   * tests give `CircuitBreakerTestingModule.forRootAsync()` the same options,
   * so that they move time instead of waiting for it.
   * `dashboard.control` puts the force and reset buttons on the dashboard (on by default here).
   */
  static register(
    upstreams: Upstreams,
    breakers: DynamicModule = CircuitBreakerModule.forRootAsync(CIRCUIT_BREAKER_ASYNC_OPTIONS),
    dashboard: { control?: boolean } = {},
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // Loads .env (if any) into the environment, where the CB_* variables are read (breakers/circuit-breaker.config.ts).
        ConfigModule.forRoot(),
        breakers,
        TerminusModule.forRoot({ logger: false }),
        CircuitBreakerHealthModule,
        CircuitBreakerMetricsModule.forRoot(),
        // The live page on /circuit-breakers, for this machine only.
        CircuitBreakerDashboardModule.forRoot({
          guard: LoopbackGuard,
          control: dashboard.control ?? true,
        }),
        // register(): an axios instance of this application's own. Plain HttpModule would hand
        // HttpService the process-wide default axios, and the pricing breaker would guard every axios call.
        HttpModule.register({}),
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
        // Every request of this module's HttpService (only pricing uses it) goes through the pricing breaker.
        provideAxiosCircuitBreaker(HttpService, 'pricing'),
        PricingService,
        // fetch's dispatcher for the warehouses: one inventory breaker per origin.
        warehouseDispatcher,
        InventoryService,
      ],
    };
  }
}
