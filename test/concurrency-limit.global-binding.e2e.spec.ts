import {
  Controller,
  Get,
  Injectable,
  Scope,
  type INestApplication,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { APP_INTERCEPTOR, HttpAdapterHost, Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BreakerConfigError,
  CircuitBreakerExceptionFilter,
  CircuitBreakerGuard,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  ConcurrencyLimit,
  ConcurrencyLimitInterceptor,
  type CircuitBreakerModuleOptions,
} from '../lib/index.js';
import { deferred } from './helpers/deferred.js';
import { nestApps, type AppSetup } from './helpers/nest-app.js';

/** The request of `/exports` waits for this, so that a second one finds the limiter full. */
let held = deferred<string>();
let started = deferred<void>();
afterEach(() => {
  held.resolve('released');
  held = deferred<string>();
  started = deferred<void>();
});

@Controller()
class ExportsController {
  @Get('named')
  @ConcurrencyLimit('api')
  named() {
    return 'named';
  }

  @Get('exports')
  async exports() {
    started.resolve();
    return held.promise;
  }
}

/** What `'default'` missing reads as, for a global binding labelled `binding`. */
const missingDefault = (binding: string) =>
  `Concurrency limiter "default" used by ConcurrencyLimitInterceptor (${binding}) on ExportsController.exports is not defined. ` +
  'Defined limiters: "api". Fix the name, or define "default" in CircuitBreakerModule.forRoot({ limiters }) or forFeatureLimiters({ ... }).';

/** The global bindings Nest offers, each as what the application gives before `init()`. */
const BINDINGS: [string, string, Pick<AppSetup, 'providers' | 'beforeInit'>][] = [
  [
    'APP_INTERCEPTOR with useFactory',
    'APP_INTERCEPTOR',
    {
      providers: [
        {
          provide: APP_INTERCEPTOR,
          useFactory: (
            registry: CircuitBreakerRegistry,
            reflector: Reflector,
            host: HttpAdapterHost,
            filter: CircuitBreakerExceptionFilter,
          ) => new ConcurrencyLimitInterceptor(registry, reflector, host, filter),
          inject: [
            CircuitBreakerRegistry,
            Reflector,
            HttpAdapterHost,
            CircuitBreakerExceptionFilter,
          ],
        },
      ],
    },
  ],
  [
    'a request-scoped APP_INTERCEPTOR with useClass',
    'APP_INTERCEPTOR',
    {
      providers: [
        { provide: APP_INTERCEPTOR, useClass: ConcurrencyLimitInterceptor, scope: Scope.REQUEST },
      ],
    },
  ],
  [
    'app.useGlobalInterceptors(new ConcurrencyLimitInterceptor(...))',
    'app.useGlobalInterceptors()',
    {
      beforeInit: (app) =>
        app.useGlobalInterceptors(
          // Built by hand, it needs what Nest would inject to answer 503 itself.
          new ConcurrencyLimitInterceptor(
            app.get(CircuitBreakerRegistry),
            app.get(Reflector),
            app.get(HttpAdapterHost),
            app.get(CircuitBreakerExceptionFilter),
          ),
        ),
    },
  ],
  [
    'app.useGlobalInterceptors(new ConcurrencyLimitInterceptor(...)) without the filter',
    'app.useGlobalInterceptors()',
    {
      beforeInit: (app) =>
        app.useGlobalInterceptors(
          // Without the module's filter, it answers as the filter does by default.
          new ConcurrencyLimitInterceptor(
            app.get(CircuitBreakerRegistry),
            app.get(Reflector),
            app.get(HttpAdapterHost),
          ),
        ),
    },
  ],
  [
    'app.useGlobalInterceptors(app.get(ConcurrencyLimitInterceptor))',
    'app.useGlobalInterceptors()',
    {
      providers: [ConcurrencyLimitInterceptor],
      beforeInit: (app) => app.useGlobalInterceptors(app.get(ConcurrencyLimitInterceptor)),
    },
  ],
];

/** The two arguments a hand-built enhancer always has, and the two it is given without (as a JavaScript caller can). */
function handBuilt(
  app: INestApplication,
): [CircuitBreakerRegistry, Reflector, HttpAdapterHost, CircuitBreakerExceptionFilter] {
  return [app.get(CircuitBreakerRegistry), app.get(Reflector), undefined!, undefined!];
}

describe('the start-up check of a global ConcurrencyLimitInterceptor', () => {
  const start = nestApps();
  const app = (options: CircuitBreakerModuleOptions, setup: AppSetup) =>
    start([CircuitBreakerModule.forRoot(options)], { controllers: [ExportsController], ...setup });

  it.each(BINDINGS)(
    'fails start-up through %s when a route names no limiter and "default" is missing',
    async (_, binding, setup) => {
      const failure = (await app({ limiters: { api: {} } }, setup).catch(
        (error: unknown) => error,
      )) as BreakerConfigError;
      expect(failure).toBeInstanceOf(BreakerConfigError);
      expect(failure.message).toBe(missingDefault(binding));
    },
  );

  it.each(BINDINGS)(
    'starts through %s with a "default" limiter, and limits the routes that name none',
    async (_, _binding, setup) => {
      const nest = await app(
        {
          limiters: {
            default: { algorithm: 'fixed', initialLimit: 1, maxQueue: 0 },
            api: { algorithm: 'fixed', initialLimit: 5 },
          },
        },
        setup,
      );
      await nest.listen(0, '127.0.0.1');
      const url = (await nest.getUrl()).replace('[::1]', '127.0.0.1');
      const first = fetch(`${url}/exports`);
      await started.promise;
      const shed = await fetch(`${url}/exports`);
      expect(shed.status).toBe(503);
      expect(shed.headers.get('circuit-breaker-code')).toBe('LOAD_SHED');
      // A route that names its limiter takes one place, in that limiter only.
      expect(await (await fetch(`${url}/named`)).text()).toBe('named');
      held.resolve('done');
      expect(await (await first).text()).toBe('done');
      const registry = nest.get(CircuitBreakerRegistry);
      expect(
        registry
          .limiterSnapshots()
          .map(({ name, admitted, shed: refused }) => [name, admitted, refused]),
      ).toEqual([
        ['default', 1, 1],
        ['api', 1, 0],
      ]);
    },
  );

  it('fails a useClass binding as before: once, at init, before any bootstrap hook runs', async () => {
    const hooks: string[] = [];
    @Injectable()
    class BootstrapWatcher implements OnApplicationBootstrap {
      onApplicationBootstrap() {
        hooks.push('bootstrap');
      }
    }
    const failure = (await app(
      { limiters: { api: {} } },
      {
        providers: [
          { provide: APP_INTERCEPTOR, useClass: ConcurrencyLimitInterceptor },
          BootstrapWatcher,
        ],
      },
    ).catch((error: unknown) => error)) as BreakerConfigError;
    expect(failure).toBeInstanceOf(BreakerConfigError);
    expect(failure.message).toBe(missingDefault('APP_INTERCEPTOR'));
    expect(hooks).toEqual([]);
  });

  it.each([
    [
      'ConcurrencyLimitInterceptor',
      (nest: INestApplication) => new ConcurrencyLimitInterceptor(...handBuilt(nest)),
    ],
    [
      'CircuitBreakerGuard',
      (nest: INestApplication) => new CircuitBreakerGuard(...handBuilt(nest)),
    ],
  ] as const)(
    '%s built with new without HttpAdapterHost fails start-up, saying what to pass',
    async (className, build) => {
      const failure = (await app(
        { limiters: { default: {} } },
        { beforeInit: (nest) => void build(nest) },
      ).catch((error: unknown) => error)) as Error;
      expect(failure).toBeInstanceOf(TypeError);
      expect(failure.message).toBe(
        `${className} built with new is missing its HttpAdapterHost: without it a refused HTTP request would answer 500 instead of 503. ` +
          `Pass it, new ${className}(registry, reflector, app.get(HttpAdapterHost), app.get(CircuitBreakerExceptionFilter)), or let Nest build it (list it in a module's providers and use app.get(${className})).`,
      );
    },
  );

  it('CircuitBreakerGuard that Nest builds beside a CircuitBreakerRegistry of your own (a unit test) starts', async () => {
    const module = await Test.createTestingModule({
      providers: [CircuitBreakerGuard, { provide: CircuitBreakerRegistry, useValue: {} }],
    }).compile();
    expect(module.get(CircuitBreakerGuard)).toBeInstanceOf(CircuitBreakerGuard);
    await module.close();
  });

  it('leaves alone an application that binds the interceptor only per route, with named limiters', async () => {
    @Controller()
    class PlainController {
      @Get('plain')
      plain() {
        return 'plain';
      }
    }
    const nest = await start([CircuitBreakerModule.forRoot({ limiters: { api: {} } })], {
      controllers: [ExportsController, PlainController],
      // Provided, and built, but bound to no route globally.
      providers: [ConcurrencyLimitInterceptor],
    });
    await nest.listen(0, '127.0.0.1');
    const url = (await nest.getUrl()).replace('[::1]', '127.0.0.1');
    expect(await (await fetch(`${url}/plain`)).text()).toBe('plain');
    expect(await (await fetch(`${url}/named`)).text()).toBe('named');
    expect(nest.get(CircuitBreakerRegistry).limiter('api').snapshot().admitted).toBe(1);
  });
});
