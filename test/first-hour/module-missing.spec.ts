import { Controller, Get, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerModuleMissingError,
  RequireCircuitBreaker,
  UseCircuitBreaker,
} from '../../lib/index.js';
import { CircuitBreakerTelemetryModule } from '../../lib/opentelemetry/index.js';
import { CircuitBreakerMetricsModule } from '../../lib/prometheus/index.js';
import { CircuitBreakerHealthModule } from '../../lib/terminus/index.js';
import { nestApps } from '../helpers/nest-app.js';

// Issue "a NestJS user's first hour", item 5: forgetting CircuitBreakerModule is found at start-up, with a dedicated error.

const start = nestApps();

/** What start() rejected with. */
async function failure(promise: Promise<unknown>): Promise<CircuitBreakerModuleMissingError> {
  try {
    await promise;
  } catch (error) {
    return error as CircuitBreakerModuleMissingError;
  }
  throw new Error('expected start-up to fail');
}

@Injectable()
class BillingService {
  @CircuitBreaker('payments')
  async charge(): Promise<string> {
    return 'charged';
  }

  @CircuitBreaker({ fallback: () => 'later' })
  async refund(): Promise<string> {
    return 'refunded';
  }
}

@Controller('orders')
class OrdersController {
  @Get()
  @CircuitBreaker()
  list(): string[] {
    return [];
  }
}

@Injectable()
class WarmedUpService implements OnModuleInit {
  warmed = false;

  onModuleInit(): void {
    this.warmed = true;
  }

  @CircuitBreaker()
  async fetch(): Promise<string> {
    return 'fetched';
  }
}

const FIX =
  "Import CircuitBreakerModule.forRoot() (or forRootAsync()) once, in the root module; it is global by default (with isGlobal: false, import it in this class's module too).";

describe('a class with @CircuitBreaker() methods and no CircuitBreakerModule', () => {
  it('fails app.init() with CircuitBreakerModuleMissingError naming the class and its methods', async () => {
    const error = await failure(start([], { providers: [BillingService] }));
    expect(error).toBeInstanceOf(CircuitBreakerModuleMissingError);
    expect(error.code).toBe('CIRCUIT_BREAKER_MODULE_MISSING');
    expect(error.name).toBe('CircuitBreakerModuleMissingError');
    expect(error.requiredBy).toBe('BillingService');
    expect(error.message).toBe(
      'BillingService has @CircuitBreaker() methods (charge, refund), but no CircuitBreakerRegistry was injected into it: ' +
        'CircuitBreakerModule is not imported where BillingService is provided, and every call would fail. ' +
        FIX,
    );
  });

  it('a controller route fails start-up the same way, instead of answering 500 on every request', async () => {
    const error = await failure(start([], { controllers: [OrdersController] }));
    expect(error).toBeInstanceOf(CircuitBreakerModuleMissingError);
    expect(error.message).toBe(
      'OrdersController has @CircuitBreaker() methods (list), but no CircuitBreakerRegistry was injected into it: ' +
        'CircuitBreakerModule is not imported where OrdersController is provided, and every call would fail. ' +
        FIX,
    );
  });

  it('under isGlobal: false, a feature module that does not import the module fails start-up', async () => {
    @Module({ providers: [BillingService] })
    class BillingModule {}
    const error = await failure(
      start([CircuitBreakerModule.forRoot({ isGlobal: false }), BillingModule]),
    );
    expect(error).toBeInstanceOf(CircuitBreakerModuleMissingError);
    expect(error.requiredBy).toBe('BillingService');
  });

  it("the class's own onModuleInit still runs, with the module present", async () => {
    const app = await start([CircuitBreakerModule.forRoot()], {
      providers: [WarmedUpService, BillingService],
    });
    expect(app.get(WarmedUpService).warmed).toBe(true);
    await expect(app.get(WarmedUpService).fetch()).resolves.toBe('fetched');
    await expect(app.get(BillingService).refund()).resolves.toBe('refunded');
    const missing = await failure(start([], { providers: [WarmedUpService] }));
    expect(missing).toBeInstanceOf(CircuitBreakerModuleMissingError);
  });

  it('an instance Nest did not build fails its first call with the same error class, saying what to do', async () => {
    const error = await failure(new BillingService().charge());
    expect(error).toBeInstanceOf(CircuitBreakerModuleMissingError);
    expect(error.code).toBe('CIRCUIT_BREAKER_MODULE_MISSING');
    expect(error.message).toBe(
      'Circuit breaker "payments" on BillingService.charge: no CircuitBreakerRegistry was injected into this instance. ' +
        'Import CircuitBreakerModule.forRoot() (or forRootAsync()) in the root module, and let Nest create the instance: one created with `new` gets no registry.',
    );
  });
});

describe('the integration modules without CircuitBreakerModule', () => {
  const message = (integration: string) =>
    `${integration} needs CircuitBreakerModule, whose CircuitBreakerRegistry it reads, and none is visible to it. ` +
    `Import CircuitBreakerModule.forRoot() (or forRootAsync()) in the root module, beside ${integration}, and keep it global (the default).`;

  it.each([
    [
      'CircuitBreakerMetricsModule',
      () => [CircuitBreakerMetricsModule.forRoot({ registry: new Registry() })],
    ],
    ['CircuitBreakerTelemetryModule', () => [CircuitBreakerTelemetryModule.forRoot()]],
    [
      'CircuitBreakerHealthModule',
      () => [TerminusModule.forRoot({ logger: false }), CircuitBreakerHealthModule],
    ],
  ])('%s fails start-up naming the missing import', async (integration, imports) => {
    const error = await failure(
      Test.createTestingModule({ imports: imports() as never[] }).compile(),
    );
    expect(error).toBeInstanceOf(CircuitBreakerModuleMissingError);
    expect(error.requiredBy).toBe(integration);
    expect(error.message).toBe(message(integration));
  });
});

describe('@RequireCircuitBreaker() and @UseCircuitBreaker() without CircuitBreakerModule', () => {
  @Controller('checkout')
  class GuardedController {
    @Get()
    @RequireCircuitBreaker('payments')
    checkout(): string {
      return 'ok';
    }
  }

  @Controller('quotes')
  class InterceptedController {
    @Get()
    @UseCircuitBreaker('quotes')
    quote(): string {
      return 'ok';
    }
  }

  it('fails start-up naming the guard and the import to add', async () => {
    const error = await failure(start([], { controllers: [GuardedController] }));
    expect(error).toBeInstanceOf(CircuitBreakerModuleMissingError);
    expect([error.requiredBy, error.message]).toEqual([
      'CircuitBreakerGuard',
      '@RequireCircuitBreaker() (CircuitBreakerGuard) needs CircuitBreakerModule, whose CircuitBreakerRegistry it reads, and none is visible to it. Import CircuitBreakerModule.forRoot() (or forRootAsync()) in the root module, beside @RequireCircuitBreaker() (CircuitBreakerGuard), and keep it global (the default).',
    ]);
  });

  it('fails start-up naming the interceptor', async () => {
    const error = await failure(start([], { controllers: [InterceptedController] }));
    expect(error).toBeInstanceOf(CircuitBreakerModuleMissingError);
    expect(error.requiredBy).toBe('CircuitBreakerInterceptor');
  });
});
