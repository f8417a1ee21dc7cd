import { Controller, Get, Injectable, Module, UseInterceptors } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import {
  BreakerConfigError,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  ConcurrencyLimit,
  ConcurrencyLimitInterceptor,
  Criticality,
} from '../lib/index.js';
import { nestApps } from './helpers/nest-app.js';

const start = nestApps();

describe('concurrency limiters in CircuitBreakerModule', () => {
  it('builds the limiters of forRoot(), forRootAsync() and forFeatureLimiters() into the registry', async () => {
    @Module({ imports: [CircuitBreakerModule.forFeatureLimiters({ search: { maxQueue: 4 } })] })
    class SearchModule {}
    const app = await start([
      CircuitBreakerModule.forRootAsync({
        useFactory: () => ({ limiters: { api: { algorithm: 'fixed', initialLimit: 3 } } }),
      }),
      SearchModule,
    ]);
    const registry = app.get(CircuitBreakerRegistry);
    expect(registry.limiterNames()).toEqual(['api', 'search']);
    expect(registry.limiter('api').snapshot()).toMatchObject({ name: 'api', limit: 3 });
    expect(registry.limiterSnapshots().map((snapshot) => snapshot.maxQueue)).toEqual([16, 4]);
    expect(() => registry.limiter('serach')).toThrow(
      'Concurrency limiter "serach" used by CircuitBreakerRegistry.limiter() is not defined. Did you mean "search"? ' +
        'Fix the name, or define "serach" in CircuitBreakerModule.forRoot({ limiters }) or forFeatureLimiters({ ... }).',
    );
  });

  it('refuses a mistyped limiter option at start-up, naming the limiter, the option and the closest one', async () => {
    const failure = start([
      CircuitBreakerModule.forRoot({ limiters: { api: { maxQeue: 10 } as never } }),
    ]).catch((error: unknown) => error);
    const error = (await failure) as BreakerConfigError;
    expect(error).toBeInstanceOf(BreakerConfigError);
    expect(error.message).toBe(
      'Concurrency limiter "api" in CircuitBreakerModule.forRoot({ limiters }): unknown option "limiters.api.maxQeue". ' +
        'Known options: limiters.api.algorithm, limiters.api.initialLimit, limiters.api.minLimit, limiters.api.maxLimit, limiters.api.maxQueue, limiters.api.queueTimeoutMs. ' +
        'Did you mean "limiters.api.maxQueue"?',
    );
  });

  it('refuses an invalid value at start-up, naming the option where it was written', async () => {
    await expect(
      start([CircuitBreakerModule.forRoot({ limiters: { api: { maxQueue: -1 } } })]),
    ).rejects.toThrow(
      'Concurrency limiter "api" in CircuitBreakerModule.forRoot({ limiters }): option "limiters.api.maxQueue" must be an integer >= 0, got -1.',
    );
    expect(() =>
      CircuitBreakerModule.forFeatureLimiters({ search: { queueTimeoutMs: 0 } }),
    ).toThrow(
      'Concurrency limiter "search" in CircuitBreakerModule.forFeatureLimiters(): option "search.queueTimeoutMs" must be a positive number of milliseconds',
    );
  });

  it('refuses a limiter defined twice, naming both places', async () => {
    @Module({ imports: [CircuitBreakerModule.forFeatureLimiters({ api: {} })] })
    class FeatureModule {}
    await expect(
      start([CircuitBreakerModule.forRoot({ limiters: { api: {} } }), FeatureModule]),
    ).rejects.toThrow(
      'Concurrency limiter "api" is defined in two places: CircuitBreakerModule.forRoot({ limiters }) and CircuitBreakerModule.forFeatureLimiters(). Define it once and name it elsewhere.',
    );
  });

  it('fails start-up when a route names a limiter nobody defined, with the closest name', async () => {
    @Controller()
    class OrdersController {
      @Get('orders')
      @ConcurrencyLimit('aip')
      orders() {
        return [];
      }
    }
    await expect(
      start([CircuitBreakerModule.forRoot({ limiters: { api: {} } })], {
        controllers: [OrdersController],
      }),
    ).rejects.toThrow(
      'Concurrency limiter "aip" used by @ConcurrencyLimit() on OrdersController.orders is not defined. Did you mean "api"? ' +
        'Fix the name, or define "aip" in CircuitBreakerModule.forRoot({ limiters }) or forFeatureLimiters({ ... }).',
    );
  });

  it('fails start-up when a route bound to the interceptor without a name has no "default" limiter', async () => {
    @Controller()
    @UseInterceptors(ConcurrencyLimitInterceptor)
    class ReportsController {
      @Get('reports')
      reports() {
        return [];
      }
    }
    await expect(
      start([CircuitBreakerModule.forRoot({ limiters: { api: {} } })], {
        controllers: [ReportsController],
      }),
    ).rejects.toThrow(
      'Concurrency limiter "default" used by @UseInterceptors(ConcurrencyLimitInterceptor) on ReportsController is not defined. Defined limiters: "api". ',
    );
  });

  it('fails start-up when the global interceptor serves a route without a name and no "default" limiter', async () => {
    @Controller()
    class ExportsController {
      @Get('named')
      @ConcurrencyLimit('api')
      named() {
        return [];
      }

      @Get('exports')
      exports() {
        return [];
      }
    }
    await expect(
      start([CircuitBreakerModule.forRoot({ limiters: { api: {} } })], {
        controllers: [ExportsController],
        providers: [{ provide: APP_INTERCEPTOR, useClass: ConcurrencyLimitInterceptor }],
      }),
    ).rejects.toThrow(
      'Concurrency limiter "default" used by ConcurrencyLimitInterceptor (APP_INTERCEPTOR) on ExportsController.exports is not defined. Defined limiters: "api". ',
    );
    // Every route names its limiter: no "default" needed.
    @Controller()
    @ConcurrencyLimit('api')
    class NamedController {
      @Get('all')
      all() {
        return [];
      }
    }
    await expect(
      start([CircuitBreakerModule.forRoot({ limiters: { api: {} } })], {
        controllers: [NamedController],
        providers: [{ provide: APP_INTERCEPTOR, useClass: ConcurrencyLimitInterceptor }],
      }),
    ).resolves.toBeDefined();
  });

  it('fails start-up when the interceptor is used and the module defines no limiter', async () => {
    @Injectable()
    class Nothing {}
    @Controller()
    class HealthController {
      @Get('health')
      @ConcurrencyLimit()
      health() {
        return 'ok';
      }
    }
    await expect(
      start([CircuitBreakerModule.forRoot()], {
        controllers: [HealthController],
        providers: [Nothing],
      }),
    ).rejects.toThrow(
      'ConcurrencyLimitInterceptor is used, but CircuitBreakerModule defines no limiter. ',
    );
  });

  it('checks decorator arguments where the class is declared', () => {
    expect(() => {
      class Jobs {
        @ConcurrencyLimit('api', { criticality: 'urgent' as never })
        run() {}
      }
      return Jobs;
    }).toThrow(
      "@ConcurrencyLimit() on Jobs.run: option \"criticality\" must be 'critical-plus', 'critical', 'sheddable-plus' or 'sheddable', got \"urgent\".",
    );
    expect(() => {
      @Criticality('sheddable')
      @ConcurrencyLimit('api', { criticality: 'critical' })
      class Jobs {}
      return Jobs;
    }).toThrow(
      "@Criticality() on Jobs: the criticality is given twice ('sheddable' and 'critical'). Keep one.",
    );
  });

  it('refuses an invalid criticalityHeader or criticalityOf at start-up', async () => {
    await expect(
      start([CircuitBreakerModule.forRoot({ criticalityHeader: 'x criticality' })]),
    ).rejects.toThrow('option "criticalityHeader" must be a header name such as "x-criticality"');
    await expect(
      start([CircuitBreakerModule.forRoot({ criticalityOf: 'header' as never })]),
    ).rejects.toThrow('option "criticalityOf" must be a function (context) =>');
  });
});
