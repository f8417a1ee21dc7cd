import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { CircuitBreaker, CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import { nestApps } from '../helpers/nest-app.js';

// Issue "a NestJS user's first hour", item 1: forRoot() in two modules must never silently keep only the last one.

const startApp = nestApps();
const start = (root: unknown) => startApp([root]);

const FIX =
  ". Each registration builds its own registry and only the last one is injected, so the others' breakers, defaults and strict would be silently lost. " +
  'Call forRoot() (or forRootAsync()) once, in the root module, and forFeature() elsewhere.';

@Injectable()
class PaymentsService {
  @CircuitBreaker('payments')
  async charge(): Promise<string> {
    return 'charged';
  }
}

describe('CircuitBreakerModule registered twice in one application', () => {
  it('forRoot() in the root module and in a feature module fails start-up, naming both modules', async () => {
    @Module({
      imports: [
        CircuitBreakerModule.forRoot({
          strict: true,
          breakers: { payments: { openDurationMs: 60_000 } },
        }),
      ],
      providers: [PaymentsService],
    })
    class PaymentsModule {}
    @Module({
      imports: [CircuitBreakerModule.forRoot({ defaults: { timeoutMs: 2_000 } }), PaymentsModule],
    })
    class AppModule {}

    await expect(start(AppModule)).rejects.toThrow(
      'CircuitBreakerModule is registered 2 times in one application: forRoot() imported by AppModule; forRoot() imported by PaymentsModule' +
        FIX,
    );
  });

  it('forRootAsync() beside forRoot() fails start-up the same way', async () => {
    @Module({
      imports: [CircuitBreakerModule.forRootAsync({ useFactory: () => ({ strict: true }) })],
    })
    class ReportsModule {}
    @Module({ imports: [CircuitBreakerModule.forRoot(), ReportsModule] })
    class AppModule {}

    await expect(start(AppModule)).rejects.toThrow(
      'CircuitBreakerModule is registered 2 times in one application: forRoot() imported by AppModule; forRootAsync() imported by ReportsModule' +
        FIX,
    );
  });

  it('two calls in one imports array fail too', async () => {
    @Module({
      imports: [CircuitBreakerModule.forRoot(), CircuitBreakerModule.forRoot({ strict: true })],
    })
    class AppModule {}

    await expect(start(AppModule)).rejects.toThrow(
      'CircuitBreakerModule is registered 2 times in one application: forRoot() imported by AppModule; forRoot() imported by AppModule' +
        FIX,
    );
  });

  it('a dynamic module whose register() imports forRoot() is named too', async () => {
    @Module({})
    class SharedModule {
      static register(): DynamicModule {
        return { module: SharedModule, imports: [CircuitBreakerModule.forRoot({ strict: true })] };
      }
    }
    @Module({ imports: [CircuitBreakerModule.forRoot(), SharedModule.register()] })
    class AppModule {}

    await expect(start(AppModule)).rejects.toThrow(
      'CircuitBreakerModule is registered 2 times in one application: forRoot() imported by AppModule; forRoot() imported by SharedModule' +
        FIX,
    );
  });

  it('one forRoot() module imported by two modules is one registration, and starts', async () => {
    const breakers = CircuitBreakerModule.forRoot({ breakers: { payments: {} } });
    @Module({ imports: [breakers], providers: [PaymentsService] })
    class PaymentsModule {}
    @Module({ imports: [breakers, PaymentsModule] })
    class AppModule {}

    const app = await start(AppModule);
    expect(app.get(CircuitBreakerRegistry).list()).toEqual(['payments']);
    await expect(app.get(PaymentsService).charge()).resolves.toBe('charged');
  });

  it('two applications in one process may each call forRoot() once', async () => {
    const build = (strict: boolean) => {
      @Module({
        imports: [CircuitBreakerModule.forRoot({ strict, breakers: { payments: {} } })],
        providers: [PaymentsService],
      })
      class AppModule {}
      return AppModule;
    };
    const [first, second] = await Promise.all([start(build(true)), start(build(false))]);
    expect(first.get(CircuitBreakerRegistry).strict).toBe(true);
    expect(second.get(CircuitBreakerRegistry).strict).toBe(false);
    expect(first.get(CircuitBreakerRegistry)).not.toBe(second.get(CircuitBreakerRegistry));
  });
});
