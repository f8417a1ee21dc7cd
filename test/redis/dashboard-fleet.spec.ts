import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { CircuitBreakerModule } from '../../lib/index.js';
import {
  CircuitBreakerDashboardModule,
  CircuitBreakerDashboardService,
} from '../../lib/dashboard/index.js';
import { RedisBreakerStore } from '../../lib/redis/index.js';
import { RedisServer, redisServerAvailable, SKIP_REASON } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';

// What the dashboard's fleet line reads of a real RedisBreakerStore: if the store's
// public readings (instanceId, shared, storeErrors, droppedWrites) change, this fails.
const available = redisServerAvailable();
if (!available) console.warn(SKIP_REASON);

describe.skipIf(!available)("the dashboard's fleet line with RedisBreakerStore", () => {
  let server: RedisServer;
  let app: INestApplication;
  let other: RedisBreakerStore;

  beforeAll(async () => {
    server = await RedisServer.start();
    const store = new RedisBreakerStore({
      redis: new Redis(server.url, { maxRetriesPerRequest: 1 }),
      instanceId: 'replica-a',
      keyPrefix: 'dashboard-fleet:',
      closeClient: true,
      logger: false,
    });
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({
          store,
          breakers: { payments: {}, flags: { share: false } },
          logging: false,
        }),
        CircuitBreakerDashboardModule.forRoot(),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    // A second replica, the engine alone: its payments fails once and opens there (short of its quorum of 2: with two
    // replicas the default quorum 'auto' would open both).
    other = new RedisBreakerStore({
      redis: new Redis(server.url, { maxRetriesPerRequest: 1 }),
      instanceId: 'replica-b',
      keyPrefix: 'dashboard-fleet:',
      closeClient: true,
      logger: false,
      reconcileIntervalMs: 200,
    });
    const payments = new Breaker(
      'payments',
      { consecutiveFailures: 1, openDurationMs: 600_000, share: { quorum: 2 } },
      { coordinator: other.coordinator },
    );
    await other.hydrate([payments]);
    await payments.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
  });
  afterAll(async () => {
    await other?.close();
    await app?.close();
    await server?.kill();
  });

  it('says which replica this is, that it shares, which replicas report and what they see, and when Redis goes away that it decides alone', async () => {
    const dashboard = app.get(CircuitBreakerDashboardService);
    await eventually('sharing', () =>
      dashboard.state().fleet?.shared === true ? true : undefined,
    );
    // The store is read at most every 3 s: the view arrives within a few.
    const view = await eventually(
      "replica-b's report of its open payments",
      () => {
        const v = dashboard.state().fleet?.view;
        return v?.replicas.length === 2 && v.replicas[1]!.notClosed.payments === 'open'
          ? v
          : undefined;
      },
      10_000,
      50,
    );
    expect(dashboard.state().fleet).toEqual({
      instanceId: 'replica-a',
      shared: true,
      storeErrors: 0,
      droppedWrites: 0,
      sharingBreakers: 1,
      sharedNow: 1,
      view: {
        at: view.at,
        replicas: [
          {
            instanceId: 'replica-a',
            lastSeenAt: view.replicas[0]!.lastSeenAt,
            ageMs: view.replicas[0]!.ageMs,
            shared: true,
            notClosed: {},
            breakers: 1,
          },
          {
            instanceId: 'replica-b',
            lastSeenAt: view.replicas[1]!.lastSeenAt,
            ageMs: view.replicas[1]!.ageMs,
            shared: true,
            notClosed: { payments: 'open' },
            breakers: 1,
          },
        ],
        // One report of two: no shared state yet, open on one replica.
        breakers: {
          payments: {
            shared: { state: 'none' },
            replicasOpen: 1,
            replicasHalfOpen: 0,
            replicasNotClosed: 1,
          },
        },
      },
    });
    // replica-a reports every 5 s (its default), replica-b every 200 ms; a replica is listed 3 intervals after its last report.
    expect(view.replicas[0]!.ageMs).toBeLessThanOrEqual(15_000);
    expect(view.replicas[1]!.ageMs).toBeLessThanOrEqual(600);
    await server.kill();
    await eventually('the outage', () =>
      dashboard.state().fleet?.shared === false ? true : undefined,
    );
    expect(dashboard.state().fleet).toMatchObject({
      instanceId: 'replica-a',
      shared: false,
      sharingBreakers: 1,
      sharedNow: 0,
    });
    // The next read of the fleet view fails: shown as text on the last answer, never thrown.
    const failed = await eventually(
      'the failed read',
      () => dashboard.state().fleet?.view?.error,
      10_000,
      50,
    );
    expect(failed).toMatch(/^the fleet view could not be read: /);
    expect(dashboard.state().fleet?.view?.replicas.map((r) => r.instanceId)).toEqual([
      'replica-a',
      'replica-b',
    ]);
  });
});
