import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BreakerConfigError,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  type FleetReconfigured,
  type FleetWrite,
} from '../../lib/index.js';
import { FleetOrderError, RedisBreakerStore } from '../../lib/redis/index.js';
import { nestApps } from '../helpers/nest-app.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually } from './helpers/wait.js';

// The registry's fleet-wide orders in Nest applications sharing one Redis: a
// reconfiguration is a patch over each replica's definition, checked as its
// start-up checks it, and a replica started later starts with it.

const available = redisServerAvailable();
const ORDER = { reason: 'provider maintenance', by: 'runbook 12' };

describe.skipIf(!available)('CircuitBreakerRegistry: orders with { fleet: true }', () => {
  const start = nestApps();
  let server: RedisServer;
  let admin: Redis;
  let prefix: string;
  let seq = 0;

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.port, '127.0.0.1');
  });
  afterAll(async () => {
    await admin?.quit();
    await server?.kill();
  });
  beforeEach(() => {
    prefix = `nest${++seq}:`;
  });

  async function replica(instanceId: string): Promise<CircuitBreakerRegistry> {
    const store = new RedisBreakerStore({
      redis: new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 }),
      closeClient: true,
      keyPrefix: prefix,
      instanceId,
      logger: false,
    });
    const app = await start([
      CircuitBreakerModule.forRoot({
        store,
        logging: false,
        defaults: { timeoutMs: 5_000 },
        breakers: { payments: { consecutiveFailures: 3 }, local: { share: false } },
      }),
    ]);
    return app.get(CircuitBreakerRegistry);
  }

  it('forces and releases every replica', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    const write: FleetWrite = await a.control('payments', { fleet: true }).force('open', ORDER);
    expect(write).toEqual({ breaker: 'payments', generation: expect.any(Number), subscribers: 2 });
    await eventually('b forced', () => (b.get('payments').snapshot().forced ? true : undefined));
    expect(b.get('payments').snapshot().forced).toMatchObject({ state: 'open', ...ORDER });
    await a.control('payments', { fleet: true }).release();
    await eventually('b released', () =>
      b.get('payments').snapshot().forced === undefined ? true : undefined,
    );
    // Without { fleet: true }: this replica only, and a promise all the same.
    const local: void = await a.control('payments').force('disabled', { reason: 'a only' });
    expect(local).toBeUndefined();
    expect([a.get('payments').state, b.get('payments').state]).toEqual(['disabled', 'closed']);
  });

  it('reconfigures every replica with patches over its definition, and a replica started later with every patch', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    const first: FleetReconfigured = await a
      .control('payments', { fleet: true })
      .reconfigure({ timeoutMs: 2_000 });
    expect(first).toMatchObject({
      previous: { timeoutMs: 5_000, consecutiveFailures: 3 },
      current: { timeoutMs: 2_000, consecutiveFailures: 3 },
      fleet: { breaker: 'payments', subscribers: 2 },
    });
    await eventually('b reconfigured', () =>
      b.get('payments').config.timeoutMs === 2_000 ? true : undefined,
    );
    // The second patch, from the other replica, goes over the first: the fleet's record holds both.
    await b.control('payments', { fleet: true }).reconfigure({ openDurationMs: 7_000 });
    await eventually('a reconfigured again', () =>
      a.get('payments').config.openDurationMs === 7_000 ? true : undefined,
    );
    expect(JSON.parse((await admin.hget(`${prefix}{payments}:config`, 'patch'))!)).toEqual({
      timeoutMs: 2_000,
      openDurationMs: 7_000,
    });
    const c = await replica('c');
    expect(c.get('payments').config).toMatchObject({
      timeoutMs: 2_000,
      openDurationMs: 7_000,
      consecutiveFailures: 3,
    });
  });

  it('rejects, and changes nothing anywhere, what a replica would refuse at start-up', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    const refused = await a
      .control('payments', { fleet: true })
      .reconfigure({ timeoutMs: -1 })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BreakerConfigError);
    expect(await admin.exists(`${prefix}{payments}:config`)).toBe(0);
    expect([a.get('payments').config.timeoutMs, b.get('payments').config.timeoutMs]).toEqual([
      5_000, 5_000,
    ]);
    await expect(a.control('local', { fleet: true }).force('open', ORDER)).rejects.toThrow(
      /^Circuit breaker "local" is not shared through this store \(share: false/,
    );
    await expect(a.control('nope', { fleet: true }).force('open', ORDER)).rejects.toThrow(
      /^No circuit breaker named "nope"/,
    );
    await expect(
      a.control('payments', { fleet: 'yes' } as unknown as { fleet: true }).force('open', ORDER),
    ).rejects.toThrow(
      'CircuitBreakerRegistry.control("payments", scope): the scope must be { fleet: true } (every replica) or left out (this replica), got an object.',
    );
  });

  it('rejects with a FleetOrderError once Redis is gone, and the replica obeys alone', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    await server.kill();
    try {
      await eventually('the outage seen', () =>
        a.get('payments').snapshot().coordination?.shared === false ? true : undefined,
      );
      const error = await a
        .control('payments', { fleet: true })
        .force('open', ORDER)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FleetOrderError);
      expect((error as Error).message).toMatch(
        /^Circuit breaker "payments" is forced open on this replica only: the other replicas were not told, because Redis is unreachable\./,
      );
      expect([a.get('payments').state, b.get('payments').state]).toEqual(['isolated', 'closed']);
    } finally {
      await server.restart();
    }
  });
});
