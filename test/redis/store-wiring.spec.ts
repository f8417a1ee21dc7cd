import { Controller, Get, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Breaker,
  BreakerConfigError,
  type BreakerCoordination,
  type BreakerStore,
  CircuitBreakerModule,
  type CircuitBreakerModuleOptions,
  CircuitBreakerRegistry,
} from '../../lib/index.js';
import type { BreakerCoordinator } from '../../lib/core/index.js';
import {
  CircuitBreakerHealthIndicator,
  CircuitBreakerHealthModule,
} from '../../lib/terminus/index.js';
import { deferred } from '../helpers/deferred.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A store that records what the module asks of it; hydrate() waits until the test lets it finish. */
class FakeStore implements BreakerStore {
  readonly log: string[] = [];
  coordination: BreakerCoordination = { shared: true, storeErrors: 0 };
  hydration = deferred<void>();
  /** Resolved once the module has called hydrate(). */
  readonly hydrating = deferred<void>();
  readonly coordinator: BreakerCoordinator = {
    transitioned: (breaker, change) =>
      this.log.push(`transitioned ${breaker.name} ${change.from}->${change.to}`),
    mayProbe: () => true,
    coordinationOf: () => this.coordination,
  };

  hydrate(breakers: readonly Breaker[]): Promise<void> {
    this.log.push(`hydrate ${breakers.map((b) => b.name).join(',')}`);
    this.hydrating.resolve();
    return this.hydration.promise;
  }

  close(): Promise<void> {
    this.log.push('close');
    return Promise.resolve();
  }
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function compile(options: CircuitBreakerModuleOptions) {
  const moduleRef = await Test.createTestingModule({
    imports: [CircuitBreakerModule.forRoot({ logging: false, ...options })],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  return app;
}

describe('CircuitBreakerModule.forRoot({ store })', () => {
  it('gives the store every breaker except share: false ones, and the application waits for hydration before serving', async () => {
    const store = new FakeStore();
    const nest = await compile({
      store,
      breakers: { payments: {}, search: { share: { quorum: 3 } }, local: { share: false } },
    });
    let initialized = false;
    const init = nest.init().then(() => (initialized = true));
    // Not a fixed number of ticks: with @nestjs/microservices and @nestjs/websockets installed, init() first imports their modules.
    await store.hydrating.promise;
    // Bootstrap is under way and stuck in hydrate(): nothing may serve before the shared state is known.
    expect(store.log).toEqual(['hydrate payments,search']);
    expect(initialized).toBe(false);
    store.hydration.resolve();
    await init;
    const registry = nest.get(CircuitBreakerRegistry);
    expect(registry.get('payments').snapshot().coordination).toEqual({
      shared: true,
      storeErrors: 0,
    });
    expect(registry.get('search').config.share).toEqual({ quorum: 3 });
    expect(registry.get('local').snapshot()).not.toHaveProperty('coordination');
  });

  it('hydrates a breaker created after start-up on its own, and closes the store on shutdown', async () => {
    const store = new FakeStore();
    store.hydration.resolve();
    const nest = await compile({
      store,
      clock: new ManualClock(0),
      breakers: { payments: { consecutiveFailures: 1 } },
    });
    await nest.init();
    const registry = nest.get(CircuitBreakerRegistry);
    const late = registry.getOrCreate('late');
    await late.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    await registry
      .get('payments')
      .execute(() => Promise.reject(new Error('down')))
      .catch(() => undefined);
    await nest.close();
    app = undefined;
    expect(store.log).toEqual([
      'hydrate payments',
      'hydrate late',
      'transitioned payments closed->open',
      'close',
    ]);
  });

  it('merges share objects of the defaults and the breaker; share: true takes the defaults', async () => {
    const store = new FakeStore();
    store.hydration.resolve();
    const nest = await compile({
      store,
      defaults: { share: { quorum: 3 } },
      breakers: { a: { share: true }, b: { share: { quorum: 1 } }, c: {} },
    });
    await nest.init();
    const registry = nest.get(CircuitBreakerRegistry);
    expect(['a', 'b', 'c'].map((name) => registry.get(name).config.share)).toEqual([
      { quorum: 3 },
      { quorum: 1 },
      { quorum: 3 },
    ]);
  });

  it('refuses share without a store, naming the breaker, the option and the fix', async () => {
    const message =
      'Circuit breaker "payments": option "share" needs a store to share through. ' +
      'Configure one, e.g. CircuitBreakerModule.forRoot({ store: new RedisBreakerStore({ redis }) }) from nestjs-circuit-breaker/redis, or remove "share".';
    await expect(compile({ breakers: { payments: { share: true } } })).rejects.toThrow(
      new BreakerConfigError(message, 'payments', 'share'),
    );
    await expect(compile({ defaults: { share: { quorum: 2 } } })).rejects.toThrow(
      'Circuit breaker "(defaults)": option "share" needs a store to share through.',
    );
    // share: false needs no store: it only says "never share".
    const nest = await compile({ breakers: { payments: { share: false } } });
    await nest.init();
    expect(nest.get(CircuitBreakerRegistry).get('payments').snapshot()).not.toHaveProperty(
      'coordination',
    );
  });

  it('refuses a store that is not one', async () => {
    await expect(compile({ store: {} as BreakerStore })).rejects.toThrow(
      'CircuitBreakerModule: option "store" must be a BreakerStore such as new RedisBreakerStore({ redis }) from nestjs-circuit-breaker/redis, got an object.',
    );
  });
});

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly breakers: CircuitBreakerHealthIndicator,
  ) {}

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.breakers.isHealthy()]);
  }
}

describe('health details of shared breakers', () => {
  it('show shared and storeErrors for shared breakers only', async () => {
    const store = new FakeStore();
    store.hydration.resolve();
    store.coordination = { shared: false, storeErrors: 7 };
    const clock = new ManualClock(5_000);
    const moduleRef = await Test.createTestingModule({
      imports: [
        TerminusModule.forRoot({ logger: false }),
        CircuitBreakerModule.forRoot({
          logging: false,
          clock,
          store,
          breakers: { payments: {}, local: { share: false } },
        }),
        CircuitBreakerHealthModule,
      ],
      controllers: [HealthController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const response = await request(app.getHttpServer()).get('/health/ready').expect(200);
    expect(response.body.details.circuit_breakers.breakers).toEqual({
      payments: {
        state: 'closed',
        since: 5_000,
        failureRate: 0,
        callsInWindow: 0,
        shared: false,
        storeErrors: 7,
      },
      local: { state: 'closed', since: 5_000, failureRate: 0, callsInWindow: 0 },
    });
  });
});
