import { Injectable, Logger, Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { CircuitBreakerModule } from '../circuit-breaker.module.js';
import type { CircuitBreakerModuleOptions } from '../interfaces/circuit-breaker-module-options.interface.js';
import { testingMessages } from './circuit-breaker-testing.messages.js';
import { CircuitBreakerTester } from './circuit-breaker.tester.js';
import { ManualClock } from './manual-clock.js';
import { testRunnerOf } from './test-runner.js';

/**
 * `CircuitBreakerModule.forRoot()`'s options, with a manual clock instead of
 * any clock; `faultInjection` defaults to `true`.
 *
 * @publicApi
 */
export interface CircuitBreakerTestingModuleOptions extends Omit<
  CircuitBreakerModuleOptions,
  'clock'
> {
  /** The clock every breaker, deadline and injected latency runs on. Default: a new `ManualClock()`. */
  clock?: ManualClock;
}

/**
 * `CircuitBreakerModule.forRootAsync()`'s options for tests: a `useFactory`
 * (what it returns gets the manual clock), plus the manual clock itself.
 *
 * @publicApi
 */
export interface CircuitBreakerTestingModuleAsyncOptions extends Pick<
  CircuitBreakerModuleOptions,
  'isGlobal' | 'httpFilter'
> {
  imports?: DynamicModule['imports'];
  inject?: any[];
  useFactory: (
    ...args: any[]
  ) =>
    | Omit<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'>
    | Promise<Omit<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'>>;
  clock?: ManualClock;
}

/**
 * A drop-in for `CircuitBreakerModule.forRoot()` / `forRootAsync()` in tests
 * (`@nestjs/testing`): the same options, DI tokens, decorators and
 * `@InjectCircuitBreaker()`, with every time source of the breakers on a
 * `ManualClock` the test moves, fault injection on, and a
 * `CircuitBreakerTester` to inject. Global, like the module it stands for.
 *
 * ```ts
 * const moduleRef = await Test.createTestingModule({
 *   imports: [CircuitBreakerTestingModule.forRoot({ breakers: { payments: { consecutiveFailures: 2 } } })],
 *   providers: [PaymentsService],
 * }).compile();
 * const breakers = moduleRef.get(CircuitBreakerTester);
 * ```
 *
 * Outside a test runner (none of `VITEST`, `JEST_WORKER_ID`,
 * `NODE_TEST_CONTEXT` or `NODE_ENV=test`, no global `describe()` and `it()`),
 * start-up logs a warning: breakers on a manual clock never time out nor
 * recover on their own.
 *
 * An application module that imports `CircuitBreakerModule.forRoot()` itself
 * can be tested as it is with `.overrideModule(CircuitBreakerModule)
 * .useModule(CircuitBreakerTestingModule.forRoot(sameOptions))`.
 *
 * @publicApi
 */
@Module({})
export class CircuitBreakerTestingModule {
  static forRoot(options: CircuitBreakerTestingModuleOptions = {}): DynamicModule {
    const { clock = new ManualClock(), ...rest } = options;
    checkClock('forRoot()', clock);
    return around(
      CircuitBreakerModule.forRoot({
        ...rest,
        clock,
        faultInjection: rest.faultInjection ?? true,
      }),
      clock,
    );
  }

  static forRootAsync(options: CircuitBreakerTestingModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== 'function')
      throw new TypeError(testingMessages.asyncNeedsFactory());
    const { clock = new ManualClock(), useFactory, ...rest } = options;
    checkClock('forRootAsync()', clock);
    return around(
      CircuitBreakerModule.forRootAsync({
        ...rest,
        useFactory: async (...args: unknown[]) => {
          const given = await useFactory(...args);
          return { ...given, clock, faultInjection: given.faultInjection ?? true };
        },
      }),
      clock,
    );
  }
}

function checkClock(method: string, clock: unknown): void {
  if (!(clock instanceof ManualClock))
    throw new TypeError(testingMessages.notAManualClock(method, clock));
}

/**
 * Says so at start-up when no test runner is found (see `testRunnerOf()`):
 * an application serving traffic on a manual clock never times a call out
 * and never recovers, and nothing else would tell its operator why.
 */
@Injectable()
class OutsideTestRunnerWarning implements OnModuleInit {
  onModuleInit(): void {
    const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process
      ?.env;
    if (testRunnerOf(env ?? {}, globalThis) === undefined)
      new Logger('CircuitBreakerTestingModule').warn(testingMessages.outsideTestRunner());
  }
}

function around(root: DynamicModule, clock: ManualClock): DynamicModule {
  return {
    module: CircuitBreakerTestingModule,
    global: true,
    imports: [root],
    providers: [
      { provide: ManualClock, useValue: clock },
      CircuitBreakerTester,
      OutsideTestRunnerWarning,
    ],
    exports: [ManualClock, CircuitBreakerTester, root],
  };
}
