import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { defer, firstValueFrom, of, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  circuitBreaker,
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  CallRejectedError,
  InjectCircuitBreaker,
  InjectedFaultError,
} from '../../lib/index.js';
import {
  CircuitBreakerTester,
  CircuitBreakerTestingModule,
  ManualClock,
  type CircuitBreakerTestingModuleOptions,
} from '../../lib/testing/index.js';
import { flush } from '../helpers/flush.js';

const START = 1_767_225_600_000;

/** The service under test: it reaches a payments API, with a fallback, through each way in. */
@Injectable()
class PaymentsService {
  calls = 0;

  constructor(@InjectCircuitBreaker('payments') readonly breaker: Breaker) {}

  @CircuitBreaker({ name: 'payments' })
  async charge(amount: number): Promise<string> {
    this.calls++;
    return `charged ${amount}`;
  }

  @CircuitBreaker({ name: 'payments', fallback: () => 'queued for later' })
  async chargeOrQueue(amount: number): Promise<string> {
    this.calls++;
    return `charged ${amount}`;
  }

  @CircuitBreaker({ name: 'payments', fallback: () => of('cached rates') })
  rates(): Observable<string> {
    return defer(() => {
      this.calls++;
      return of('live rates');
    });
  }
}

const OPTIONS = {
  breakers: {
    payments: {
      consecutiveFailures: 2,
      openDurationMs: 30_000,
      timeoutMs: 1_000,
      jitter: 0,
    },
  },
};

const modules: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (modules.length > 0) await modules.pop()!.close();
});

async function start(options: CircuitBreakerTestingModuleOptions = OPTIONS) {
  const moduleRef = await Test.createTestingModule({
    imports: [CircuitBreakerTestingModule.forRoot(options)],
    providers: [PaymentsService],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  modules.push(app);
  return {
    app,
    service: app.get(PaymentsService),
    breakers: app.get(CircuitBreakerTester),
    clock: app.get(ManualClock),
  };
}

describe('CircuitBreakerTestingModule', () => {
  it('is a drop-in for forRoot(): same options, @InjectCircuitBreaker and decorators, on a manual clock', async () => {
    const { service, breakers, clock } = await start();
    expect(service.breaker).toBe(breakers.breaker('payments'));
    expect(breakers.clock).toBe(clock);
    expect(service.breaker.clock).toBe(clock);
    expect([clock.now(), service.breaker.snapshot().since]).toEqual([START, START]);
    expect(await service.charge(5)).toBe('charged 5');
  });

  it('opens a breaker, waits out its open duration and watches the probe close it, with no sleep', async () => {
    const { service, breakers, clock } = await start();
    const fault = breakers.inject('payments', { fail: true });
    for (let i = 0; i < 2; i++) await expect(service.charge(1)).rejects.toThrow(InjectedFaultError);
    await breakers.waitFor('payments', 'open');
    await expect(service.charge(1)).rejects.toThrow(CallRejectedError);
    fault.remove();
    const halfOpen = breakers.waitFor('payments', 'half-open');
    clock.advance(30_000);
    await halfOpen;
    expect(await service.charge(2)).toBe('charged 2');
    expect(breakers.state('payments')).toBe('closed');
    expect(breakers.history('payments')).toEqual([
      { from: 'closed', to: 'open', reason: 'consecutive-failures', at: START },
      { from: 'open', to: 'half-open', reason: 'open-duration-elapsed', at: START + 30_000 },
      { from: 'half-open', to: 'closed', reason: 'probes-succeeded', at: START + 30_000 },
    ]);
    // Only the probe reached the dependency.
    expect(service.calls).toBe(1);
  });

  it('an active health check runs when the manual clock reaches its interval, not in real time', async () => {
    const checks: number[] = [];
    const { breakers, clock } = await start({
      breakers: {
        payments: {
          ...OPTIONS.breakers.payments,
          healthCheck: {
            fn: async () => {
              checks.push(clock.now() - START);
            },
            intervalMs: 5_000,
          },
        },
      },
    });
    // A health check is a function: the descriptor names it instead of cloning it.
    expect(breakers.describe('payments').options.healthCheck).toEqual({
      fn: 'custom',
      intervalMs: 5_000,
      timeoutMs: 5_000,
      onSuccess: 'half-open',
    });
    const fault = breakers.inject('payments', { fail: true });
    const breaker = breakers.breaker('payments');
    for (let i = 0; i < 2; i++) await breaker.execute(async () => 'x').catch(() => undefined);
    fault.remove();
    expect(breakers.state('payments')).toBe('open');
    clock.advance(4_999);
    await flush();
    expect(checks).toEqual([]);
    // No real time passes: the scheduler's timer is the clock's.
    clock.advance(1);
    await flush();
    expect(checks).toEqual([5_000]);
    expect(breakers.state('payments')).toBe('half-open');
    expect(breakers.history('payments').at(-1)).toEqual({
      from: 'open',
      to: 'half-open',
      reason: 'health-check',
      at: START + 5_000,
    });
  });

  it('a hung call times out on the manual clock: the per-call deadline follows it', async () => {
    const { breakers, clock } = await start();
    const breaker = breakers.breaker('payments');
    const hung = breaker.execute(() => new Promise<never>(() => {})).catch((e: unknown) => e);
    await clock.whenTimerPending();
    clock.advance(1_000);
    expect(await hung).toBeInstanceOf(CallTimeoutError);
    expect(breaker.snapshot().totals.timeouts).toBe(1);
  });

  it('waitFor() resolves at once when the breaker is there already, and on a lazy transition the clock makes due', async () => {
    const { breakers, clock } = await start();
    await breakers.waitFor('payments', 'closed');
    breakers.inject('payments', { fail: true });
    const breaker = breakers.breaker('payments');
    for (let i = 0; i < 2; i++) await breaker.execute(() => 'ok').catch(() => undefined);
    const waiting = breakers.waitFor('payments', 'half-open');
    let resolved = false;
    void waiting.then(() => (resolved = true));
    clock.advance(29_999);
    await flush();
    expect(resolved).toBe(false);
    clock.advance(1);
    await waiting;
    expect(breakers.history('payments').at(-1)).toEqual({
      from: 'open',
      to: 'half-open',
      reason: 'open-duration-elapsed',
      at: START + 30_000,
    });
  });

  it('waitFor() times out naming the breaker, the awaited state, the state it is in and its transitions', async () => {
    const { breakers } = await start();
    await expect(breakers.waitFor('payments', 'open', { timeoutMs: 20 })).rejects.toThrow(
      new Error(
        'CircuitBreakerTester.waitFor("payments", \'open\'): the breaker is still closed after 20 ms of real time. It has not changed state since the test module started. Move the manual clock (clock.advance()) or make the calls that would get it there.',
      ),
    );
    breakers.force('payments', 'open', { reason: 'maintenance' });
    await expect(breakers.waitFor('payments', 'half-open', { timeoutMs: 10 })).rejects.toThrow(
      'the breaker is still isolated after 10 ms of real time. Its transitions so far: closed → isolated (forced). Move the manual clock',
    );
    await expect(breakers.waitFor('payments', 'ajar' as never)).rejects.toThrow(
      'CircuitBreakerTester.waitFor("payments"): "ajar" is not a state of a breaker. Wait for one of: closed, open, half-open, isolated, disabled, metrics-only.',
    );
  });

  it('force() refuses a misspelt option, naming the closest, and forces nothing', async () => {
    const { breakers } = await start();
    expect(() =>
      breakers.force('payments', 'open', { reason: 'x', until: START + 1_000 } as never),
    ).toThrow(
      new TypeError(
        'CircuitBreakerTester.force("payments"): no option "until". Did you mean "untilMs"? Its options are reason, untilMs and key; nothing was forced.',
      ),
    );
    expect(breakers.state('payments')).toBe('closed');
  });

  it('force() holds a state with a reason, restore() releases it and removes every fault', async () => {
    const { service, breakers } = await start();
    breakers.force('payments', 'open', { reason: 'payments maintenance' });
    expect(breakers.breaker('payments').snapshot().forced).toEqual({
      state: 'open',
      reason: 'payments maintenance',
      by: 'test',
      since: START,
    });
    await expect(service.charge(1)).rejects.toThrow(CallRejectedError);
    breakers.restore();
    const fault = breakers.inject('payments', { fail: true });
    await expect(service.charge(1)).rejects.toThrow(InjectedFaultError);
    breakers.restore();
    expect(fault.active).toBe(false);
    expect(await service.charge(3)).toBe('charged 3');
    expect(breakers.history('payments').map((t) => [t.from, t.to, t.reason])).toEqual([
      ['closed', 'isolated', 'forced'],
      ['isolated', 'closed', 'released'],
    ]);
    breakers.clearHistory();
    expect(breakers.history('payments')).toEqual([]);
    expect(() => breakers.history('paymnets')).toThrow('No circuit breaker named "paymnets"');
  });

  it('inject() reaches decorated methods with a fallback, the Observable path and the operator alike, without reaching the dependency', async () => {
    const { service, breakers } = await start({
      breakers: { payments: { ...OPTIONS.breakers.payments, consecutiveFailures: 100 } },
    });
    const fault = breakers.inject('payments', { fail: true });
    // A Promise method still answers with a promise, though the injected failure is thrown at once.
    const queued = service.chargeOrQueue(1);
    expect(queued).toBeInstanceOf(Promise);
    expect(await queued).toBe('queued for later');
    expect(await firstValueFrom(service.rates())).toBe('cached rates');
    const viaOperator = await firstValueFrom(
      defer(() => {
        service.calls++;
        return of('live');
      }).pipe(circuitBreaker(breakers.breaker('payments'))),
    ).catch((e: unknown) => e);
    expect(viaOperator).toBeInstanceOf(InjectedFaultError);
    expect([service.calls, fault.injected]).toEqual([0, 3]);
    expect(breakers.breaker('payments').snapshot().totals).toMatchObject({
      failures: { total: 3 },
      fallbacks: 2,
    });
    fault.remove();
    expect(await service.chargeOrQueue(1)).toBe('charged 1');
    expect(await firstValueFrom(service.rates())).toBe('live rates');
    expect(service.calls).toBe(2);
  });

  it('inject() latency on the operator: the source is subscribed once the latency has passed on the manual clock', async () => {
    const { service, breakers, clock } = await start();
    breakers.inject('payments', { latencyMs: 400 });
    let value: string | undefined;
    void firstValueFrom(service.rates()).then((v) => (value = v));
    await flush();
    expect([service.calls, value]).toEqual([0, undefined]);
    await clock.advanceAsync(400);
    expect([service.calls, value]).toEqual([1, 'live rates']);
  });

  it('inject() on a synchronous decorated method: the failure is thrown at once, the latency ignored (it cannot wait)', async () => {
    @Injectable()
    class Vat {
      calls = 0;
      @CircuitBreaker({ name: 'payments', fallback: () => 0.2 })
      rate(country: string): number {
        this.calls++;
        return country === 'FR' ? 0.2 : 0.19;
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [CircuitBreakerTestingModule.forRoot(OPTIONS)],
      providers: [Vat],
    }).compile();
    modules.push(moduleRef);
    const vat = moduleRef.get(Vat);
    const breakers = moduleRef.get(CircuitBreakerTester);
    breakers.inject('payments', { latencyMs: 500 });
    expect(vat.rate('DE')).toBe(0.19);
    breakers.inject('payments', { latencyMs: 500, fail: true });
    expect(vat.rate('DE')).toBe(0.2);
    expect([vat.calls, breakers.clock.pendingTimers]).toEqual([1, 0]);
  });

  it('inject() overload: the decorated call is refused as a 429, and the next waits out its Retry-After', async () => {
    const { service, breakers, clock } = await start();
    const fault = breakers.inject('payments', { overload: { retryAfterMs: 5_000 } });
    await expect(service.charge(1)).rejects.toMatchObject({ status: 429, retryAfterMs: 5_000 });
    fault.remove();
    await expect(service.charge(1)).rejects.toMatchObject({
      reason: 'retry-after',
      retryAfterMs: 5_000,
    });
    clock.advance(5_000);
    expect(await service.charge(1)).toBe('charged 1');
    expect(breakers.state('payments')).toBe('closed');
  });

  it('inject() with a rate spreads the fault deterministically over decorated calls', async () => {
    const { service, breakers } = await start({
      breakers: { payments: { ...OPTIONS.breakers.payments, consecutiveFailures: 100 } },
    });
    breakers.inject('payments', { fail: true, rate: 0.5 });
    const answers: string[] = [];
    for (let i = 1; i <= 6; i++) answers.push(await service.chargeOrQueue(i));
    expect(answers).toEqual([
      'queued for later',
      'charged 2',
      'queued for later',
      'charged 4',
      'queued for later',
      'charged 6',
    ]);
  });

  it('describe() gives the effective options as stable data; expectOptions() lists every difference', async () => {
    const { breakers } = await start();
    const descriptor = breakers.describe('payments');
    expect(descriptor).toEqual({
      name: 'payments',
      kind: 'breaker',
      shared: false,
      options: {
        window: { type: 'count', size: 100 },
        rateRule: false,
        failureRateThreshold: 0.5,
        minimumThroughput: 20,
        consecutiveFailures: 2,
        slowCallDurationMs: undefined,
        slowCallRateThreshold: undefined,
        timeoutMs: 1_000,
        openDurationMs: 30_000,
        backoffMultiplier: 1,
        backoffMaxMs: Infinity,
        jitter: 0,
        maxRetryAfterMs: 300_000,
        maxProbes: 1,
        maxConcurrentProbes: 1,
        successesToClose: 1,
        probeTimeoutMs: 1_000,
        // The probe's own deadline bounds how long it may hold the budget.
        probeMaxWaitMs: 1_000,
        overloadK: 2,
        classify: 'default',
        classifyResult: 'default',
        perKey: undefined,
        aggregate: undefined,
        share: undefined,
        bulkhead: undefined,
        rampUp: undefined,
        healthCheck: undefined,
      },
    });
    expect(() =>
      breakers.expectOptions('payments', { timeoutMs: 1_000, window: { type: 'count' } }),
    ).not.toThrow();
    expect(() =>
      breakers.expectOptions('payments', {
        timeoutMs: 2_000,
        window: { size: 20 },
        classify: 'custom',
      }),
    ).toThrow(
      new Error(
        'Circuit breaker "payments": its effective options differ from what the test expects:\n  - timeoutMs is 1000, expected 2000\n  - window.size is 100, expected 20\n  - classify is "default", expected "custom"',
      ),
    );
    expect(() => breakers.expectOptions('payments', { timeout: 1 } as never)).toThrow(
      'Circuit breaker "payments": expectOptions() names "timeout", which is not an effective option of a breaker. Compare with describe("payments").options.',
    );
  });

  it('a lastGood fallback ages on the manual clock: fresh within maxAgeMs, gone after', async () => {
    @Injectable()
    class RatesService {
      @CircuitBreaker({ name: 'payments', fallback: { lastGood: { maxAgeMs: 60_000 } } })
      async rate(currency: string): Promise<number> {
        return currency === 'EUR' ? 1 : 2;
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [CircuitBreakerTestingModule.forRoot(OPTIONS)],
      providers: [RatesService],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    modules.push(app);
    const breakers = app.get(CircuitBreakerTester);
    const rates = app.get(RatesService);
    expect(await rates.rate('EUR')).toBe(1);
    breakers.inject('payments', { fail: true });
    breakers.clock.advance(60_000);
    expect(await rates.rate('EUR')).toBe(1);
    breakers.clock.advance(1);
    await expect(rates.rate('EUR')).rejects.toThrow(InjectedFaultError);
  });

  it('works with per-key families: inject, waitFor and history take a key', async () => {
    const { breakers } = await start({
      breakers: {
        inventory: { perKey: { maxKeys: 10 }, consecutiveFailures: 1, jitter: 0 },
      } as never,
    });
    breakers.inject('inventory', { fail: true }, { key: 'a' });
    const a = breakers.breaker('inventory', { key: 'a' });
    await a.execute(() => 'ok').catch(() => undefined);
    await breakers.waitFor('inventory', 'open', { key: 'a' });
    expect(breakers.state('inventory', { key: 'b' })).toBe('closed');
    expect(breakers.history('inventory', { key: 'a' }).map((t) => t.to)).toEqual(['open']);
    expect(breakers.describe('inventory').kind).toBe('per-key family');
  });

  it('forRootAsync(): the factory options, with the manual clock and fault injection added', async () => {
    const clock = new ManualClock(5_000_000);
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerTestingModule.forRootAsync({
          clock,
          useFactory: async () => ({ breakers: { payments: { timeoutMs: 50 } } }),
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    modules.push(app);
    const breakers = app.get(CircuitBreakerTester);
    expect(breakers.clock).toBe(clock);
    breakers.expectOptions('payments', { timeoutMs: 50 });
    expect(breakers.inject('payments', { latencyMs: 10 }).active).toBe(true);
    expect(() => CircuitBreakerTestingModule.forRootAsync({ useClass: Object } as never)).toThrow(
      'CircuitBreakerTestingModule.forRootAsync() takes { useFactory, inject?, imports? }',
    );
    expect(() => CircuitBreakerTestingModule.forRoot({ clock: { now: () => 0 } as never })).toThrow(
      'CircuitBreakerTestingModule.forRoot(): option "clock" must be a ManualClock from nestjs-circuit-breaker/testing',
    );
  });

  it("stands in for an application module's own forRoot() with overrideModule() (Nest matches the very object imported)", async () => {
    const breakersModule = CircuitBreakerModule.forRoot(OPTIONS);
    @Module({ imports: [breakersModule], providers: [PaymentsService] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideModule(breakersModule)
      .useModule(CircuitBreakerTestingModule.forRoot(OPTIONS))
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    modules.push(app);
    const breakers = app.get(CircuitBreakerTester);
    expect(app.get(PaymentsService).breaker).toBe(breakers.breaker('payments'));
    expect(app.get(CircuitBreakerRegistry).list()).toEqual(['payments']);
    breakers.inject('payments', { fail: true });
    await expect(app.get(PaymentsService).charge(1)).rejects.toThrow(InjectedFaultError);
  });
});

describe("the README's Testing your breakers example, as written", () => {
  it('opens the breaker without calling the catalog, waits out the open duration and closes on the probe', async () => {
    let catalogCalls = 0;
    @Injectable()
    class CatalogClient {
      @CircuitBreaker('catalog')
      async product(id: string): Promise<{ id: string }> {
        catalogCalls++;
        return { id };
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerTestingModule.forRoot({
          breakers: { catalog: { consecutiveFailures: 2, openDurationMs: 30_000 } },
        }),
      ],
      providers: [CatalogClient],
    }).compile();
    modules.push(moduleRef);
    const breakers = moduleRef.get(CircuitBreakerTester);
    const client = moduleRef.get(CatalogClient);

    const outage = breakers.inject('catalog', { fail: true });
    await expect(client.product('1')).rejects.toThrow();
    await expect(client.product('1')).rejects.toThrow();
    await breakers.waitFor('catalog', 'open');
    outage.remove();
    breakers.clock.advance(30_000);
    await client.product('1');
    expect(breakers.history('catalog').map((t) => t.to)).toEqual(['open', 'half-open', 'closed']);
    expect(catalogCalls).toBe(1);
  });
});

describe('fault injection outside tests', () => {
  it('CircuitBreakerModule.forRoot({ faultInjection: true }) allows registry.injectFault() for a game day, logged at warn; without it, it is refused', async () => {
    const warnings: string[] = [];
    const logger = {
      log() {},
      error() {},
      warn(message: unknown, context?: unknown) {
        if (context === 'CircuitBreaker') warnings.push(String(message));
      },
    };
    for (const faultInjection of [true, undefined]) {
      const moduleRef = await Test.createTestingModule({
        imports: [CircuitBreakerModule.forRoot({ ...OPTIONS, faultInjection })],
        providers: [PaymentsService],
      }).compile();
      const app = moduleRef.createNestApplication({ logger });
      await app.init();
      modules.push(app);
      const registry = app.get(CircuitBreakerRegistry);
      if (faultInjection) {
        const fault = registry.injectFault('payments', { fail: true });
        expect(await app.get(PaymentsService).chargeOrQueue(1)).toBe('queued for later');
        fault.remove();
        fault.remove();
        expect(await app.get(PaymentsService).chargeOrQueue(1)).toBe('charged 1');
        expect([fault.injected, fault.active]).toEqual([1, false]);
        registry
          .injectFault('payments', { overload: { retryAfterMs: 2_000 }, latencyMs: 50, rate: 0.25 })
          .remove();
        expect(warnings).toEqual([
          'Circuit breaker "payments": fault injected (failures, on every call); its calls see it instead of the dependency\'s answer until the fault is removed.',
          'Circuit breaker "payments": injected fault removed, after 1 call got it.',
          'Circuit breaker "payments": fault injected (overload, Retry-After 2000 ms, latency 50 ms, on 25% of calls); its calls see it instead of the dependency\'s answer until the fault is removed.',
          'Circuit breaker "payments": injected fault removed, after 0 calls got it.',
        ]);
      } else {
        expect(() => registry.injectFault('payments', { fail: true })).toThrow(
          'Circuit breaker "payments": fault injection is off, so injectFault() is refused',
        );
      }
    }
    const wrong = Test.createTestingModule({
      imports: [CircuitBreakerModule.forRoot({ faultInjection: 'yes' as never })],
    }).compile();
    await expect(wrong).rejects.toThrow(
      'CircuitBreakerModule: option "faultInjection" must be a boolean, got "yes".',
    );
  });
});
