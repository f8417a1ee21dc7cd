import { Injectable, Module } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  getCircuitBreakerToken,
  InjectCircuitBreaker,
  type CircuitBreakerModuleOptions,
  type CircuitBreakerOptionsFactory,
} from '../lib/index.js';
import { nestApps } from './helpers/nest-app.js';

const startApp = nestApps();
const start = (imports: unknown[], providers: unknown[] = []) => startApp(imports, { providers });

@Injectable()
class PaymentsClient {
  constructor(@InjectCircuitBreaker('payments') readonly breaker: Breaker) {}
}

/** Reads a breaker from the registry in its constructor: the registry it receives must hold the module's breakers. */
@Injectable()
class EagerReader {
  readonly breaker: Breaker;
  constructor(registry: CircuitBreakerRegistry) {
    this.breaker = registry.get('payments');
  }
}

describe('CircuitBreakerModule', () => {
  it('hands the registry to a constructor with the breakers forRoot() defines already in it', async () => {
    const app = await start(
      [CircuitBreakerModule.forRoot({ breakers: { payments: { openDurationMs: 4_321 } } })],
      [EagerReader],
    );
    expect(app.get(EagerReader).breaker).toBe(app.get(CircuitBreakerRegistry).get('payments'));
    expect(app.get(EagerReader).breaker.config.openDurationMs).toBe(4_321);
  });

  it('forRoot() with no argument gives an empty, global registry', async () => {
    const app = await start([CircuitBreakerModule.forRoot()]);
    const registry = app.get(CircuitBreakerRegistry);
    expect(registry.list()).toEqual([]);
    expect(registry.getOrCreate('ad-hoc').config.failureRateThreshold).toBe(0.5);
  });

  it('forRoot({ breakers }) builds each breaker at start-up over the defaults, injectable by name', async () => {
    const app = await start(
      [
        CircuitBreakerModule.forRoot({
          defaults: { openDurationMs: 5_000, halfOpen: { maxProbes: 2 } },
          breakers: { payments: { halfOpen: { maxConcurrent: 2 } } },
        }),
      ],
      [PaymentsClient],
    );
    const client = app.get(PaymentsClient);
    expect(client.breaker).toBe(app.get(CircuitBreakerRegistry).get('payments'));
    expect(client.breaker.config).toMatchObject({
      openDurationMs: 5_000,
      maxProbes: 2,
      maxConcurrentProbes: 2,
    });
    expect(app.get(getCircuitBreakerToken('payments'))).toBe(client.breaker);
  });

  it('a bad option fails start-up with a message naming the breaker and the option', async () => {
    await expect(
      start([
        CircuitBreakerModule.forRoot({ breakers: { payments: { failureRateThreshold: 2 } } }),
      ]),
    ).rejects.toThrow(
      'Circuit breaker "payments" in CircuitBreakerModule: option "breakers.payments.failureRateThreshold" must be a number in (0, 1], got 2.',
    );
    await expect(
      start([CircuitBreakerModule.forRoot({ defaults: { jitter: -1 } })]),
    ).rejects.toThrow(
      'CircuitBreakerModule: option "defaults.jitter" must be a number in [0, 1], got -1.',
    );
    // The module's own keys are known when forRoot() is called: a typo fails there, before start-up.
    expect(() => CircuitBreakerModule.forRoot({ breakerz: {} } as never)).toThrow(
      'CircuitBreakerModule: unknown option "breakerz".',
    );
  });

  it('nested options that are not objects fail start-up, even over defaults that are', async () => {
    await expect(
      start([
        CircuitBreakerModule.forRoot({
          defaults: { halfOpen: { maxProbes: 2 } },
          breakers: { a: { halfOpen: 5 as never } },
        }),
      ]),
    ).rejects.toThrow(
      'Circuit breaker "a" in CircuitBreakerModule: option "breakers.a.halfOpen" must be an object, got 5.',
    );
    await expect(
      start([CircuitBreakerModule.forRoot({ breakers: { a: null as never } })]),
    ).rejects.toThrow(
      'Circuit breaker "a" in CircuitBreakerModule: option "breakers.a" must be an object, got null. Leave the option out (or undefined) to use its default.',
    );
  });

  describe('forRootAsync', () => {
    const options: CircuitBreakerModuleOptions = {
      breakers: { inventory: { openDurationMs: 1_234 } },
    };

    @Injectable()
    class OptionsFactory implements CircuitBreakerOptionsFactory {
      createCircuitBreakerOptions() {
        return options;
      }
    }
    @Module({ providers: [OptionsFactory], exports: [OptionsFactory] })
    class ConfigModule {}

    it.each([
      ['useFactory', CircuitBreakerModule.forRootAsync({ useFactory: async () => options })],
      [
        'useFactory with inject',
        CircuitBreakerModule.forRootAsync({
          imports: [ConfigModule],
          inject: [OptionsFactory],
          useFactory: (f: OptionsFactory) => f.createCircuitBreakerOptions(),
        }),
      ],
      ['useClass', CircuitBreakerModule.forRootAsync({ useClass: OptionsFactory })],
      [
        'useExisting',
        CircuitBreakerModule.forRootAsync({ imports: [ConfigModule], useExisting: OptionsFactory }),
      ],
    ])('%s', async (_label, module) => {
      const app = await start([module]);
      expect(app.get(CircuitBreakerRegistry).get('inventory').config.openDurationMs).toBe(1_234);
    });

    it('a factory that returns httpFilter does not compile, and fails start-up: it goes beside useFactory', async () => {
      // @ts-expect-error: what the factory returns is typed without isGlobal and httpFilter.
      const typed = CircuitBreakerModule.forRootAsync({ useFactory: () => ({ httpFilter: true }) });
      const returned = { httpFilter: true } as CircuitBreakerModuleOptions;
      for (const module of [
        typed,
        CircuitBreakerModule.forRootAsync({ useFactory: () => returned }),
      ])
        await expect(start([module])).rejects.toThrow(
          'CircuitBreakerModule: unknown option "httpFilter". Known options: defaults, breakers, strict, clock, logging, eventEmitter, store, faultInjection, limiters, criticalityHeader, criticalityOf.',
        );
      const beside = await start([
        CircuitBreakerModule.forRootAsync({ useFactory: () => ({}), httpFilter: true }),
      ]);
      expect(beside.get(CircuitBreakerRegistry)).toBeInstanceOf(CircuitBreakerRegistry);
    });

    it('makes breakers injectable by name through forFeature()', async () => {
      @Injectable()
      class InventoryClient {
        constructor(@InjectCircuitBreaker('inventory') readonly breaker: Breaker) {}
      }
      @Module({
        imports: [CircuitBreakerModule.forFeature(['inventory'])],
        providers: [InventoryClient],
        exports: [InventoryClient],
      })
      class InventoryModule {}
      const app = await start([
        CircuitBreakerModule.forRootAsync({ useFactory: () => options }),
        InventoryModule,
      ]);
      expect(app.get(InventoryClient).breaker.config.openDurationMs).toBe(1_234);
    });
  });

  describe('forFeature', () => {
    it('defines breakers with options, injectable in the feature module', async () => {
      @Injectable()
      class Shipping {
        constructor(@InjectCircuitBreaker('shipping') readonly breaker: Breaker) {}
      }
      @Module({
        imports: [CircuitBreakerModule.forFeature({ shipping: { consecutiveFailures: 3 } })],
        providers: [Shipping],
        exports: [Shipping],
      })
      class ShippingModule {}
      const app = await start([CircuitBreakerModule.forRoot(), ShippingModule]);
      expect(app.get(Shipping).breaker.config.consecutiveFailures).toBe(3);
      expect(app.get(CircuitBreakerRegistry).list()).toEqual(['shipping']);
    });

    it('options for one name in forRoot and forFeature fail start-up naming both places', async () => {
      @Module({
        imports: [CircuitBreakerModule.forFeature({ shipping: { consecutiveFailures: 3 } })],
      })
      class ShippingModule {}
      await expect(
        start([CircuitBreakerModule.forRoot({ breakers: { shipping: {} } }), ShippingModule]),
      ).rejects.toThrow(
        'Circuit breaker "shipping" has options set in two places: CircuitBreakerModule.forRoot({ breakers }) and CircuitBreakerModule.forFeature(). Set them in one place and refer to the breaker by name elsewhere.',
      );
    });

    it('two forFeature() calls giving options for one name conflict at start-up', async () => {
      @Module({ imports: [CircuitBreakerModule.forFeature({ shared: { timeoutMs: 100 } })] })
      class A {}
      @Module({
        imports: [CircuitBreakerModule.forFeature({ shared: { consecutiveFailures: 2 } })],
      })
      class B {}
      await expect(start([CircuitBreakerModule.forRoot({}), A, B])).rejects.toThrow(
        'Circuit breaker "shared" has options set in two places: CircuitBreakerModule.forFeature() and CircuitBreakerModule.forFeature().',
      );
    });

    it('a module naming a breaker starts beside a module defining it, whichever is built first', async () => {
      @Injectable()
      class Reader {
        constructor(@InjectCircuitBreaker('payments') readonly breaker: Breaker) {}
      }
      @Module({
        imports: [CircuitBreakerModule.forFeature(['payments'])],
        providers: [Reader],
        exports: [Reader],
      })
      class NamingModule {}
      @Module({
        imports: [CircuitBreakerModule.forFeature({ payments: { consecutiveFailures: 4 } })],
      })
      class DefiningModule {}
      for (const order of [
        [NamingModule, DefiningModule],
        [DefiningModule, NamingModule],
      ]) {
        const app = await start([
          CircuitBreakerModule.forRootAsync({ useFactory: () => ({}) }),
          ...order,
        ]);
        expect(app.get(Reader).breaker.config.consecutiveFailures).toBe(4);
      }
    });

    it('under strict, forFeature() may define breakers: it is central configuration too', async () => {
      @Module({
        imports: [CircuitBreakerModule.forFeature({ shipping: { consecutiveFailures: 3 } })],
      })
      class ShippingModule {}
      const app = await start([CircuitBreakerModule.forRoot({ strict: true }), ShippingModule]);
      expect(app.get(CircuitBreakerRegistry).get('shipping').config.consecutiveFailures).toBe(3);
    });

    it('under strict, naming an undefined breaker fails start-up', async () => {
      @Module({ imports: [CircuitBreakerModule.forFeature(['shiping'])] })
      class ShippingModule {}
      await expect(
        start([
          CircuitBreakerModule.forRoot({ strict: true, breakers: { shipping: {} } }),
          ShippingModule,
        ]),
      ).rejects.toThrow(
        'Circuit breaker "shiping" used by CircuitBreakerModule.forFeature() of "shiping" is not defined, and CircuitBreakerModule is strict.',
      );
    });

    it('rejects what is neither names nor a record', () => {
      expect(() => CircuitBreakerModule.forFeature('payments' as never)).toThrow(
        new TypeError(
          'CircuitBreakerModule.forFeature() takes breaker names or a record of name → options, got "payments". Pass [\'payments\'] to use breakers defined elsewhere, or { payments: { ... } } to define them here.',
        ),
      );
      expect(() => CircuitBreakerModule.forFeature([''])).toThrow(
        'CircuitBreakerModule.forFeature() takes breaker names or a record of name → options, got "".',
      );
    });
  });

  it('two applications in one process never share a breaker', async () => {
    const module = () =>
      CircuitBreakerModule.forRoot({ breakers: { payments: { consecutiveFailures: 1 } } });
    const first = await start([module()]);
    const second = await start([module()]);
    const a = first.get(CircuitBreakerRegistry).get('payments');
    const b = second.get(CircuitBreakerRegistry).get('payments');
    expect(a).not.toBe(b);
    await a.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    expect(a.state).toBe('open');
    expect(b.state).toBe('closed');
  });
});
