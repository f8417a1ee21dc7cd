import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  });
  afterAll(async () => {
    await app?.close();
    await server?.kill();
  });

  it('says which replica this is, that it shares, and when Redis goes away that it decides alone', async () => {
    const dashboard = app.get(CircuitBreakerDashboardService);
    await eventually('sharing', () =>
      dashboard.state().fleet?.shared === true ? true : undefined,
    );
    expect(dashboard.state().fleet).toEqual({
      instanceId: 'replica-a',
      shared: true,
      storeErrors: 0,
      droppedWrites: 0,
      sharingBreakers: 1,
      sharedNow: 1,
    });
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
  });
});
