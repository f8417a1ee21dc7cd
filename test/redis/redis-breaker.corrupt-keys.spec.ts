import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Breaker, type BreakerCoordination, type BreakerOptions } from '../../lib/core/index.js';
import { RedisBreakerStore } from '../../lib/redis/index.js';
import type { SharedBreaker } from '../../lib/redis/redis-breaker.coordinator.js';
import { CorruptKeys, isKeyError } from '../../lib/redis/redis-breaker.corrupt-keys.js';
import { breakerKeys } from '../../lib/redis/redis-breaker.keys.js';
import { redisBreakerMessages } from '../../lib/redis/redis-breaker.messages.js';
import { SlotOutages } from '../../lib/redis/redis-breaker.slots.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { eventually, nextTransition } from './helpers/wait.js';
import { keepingAllButQuorum } from './helpers/log-lines.js';

// A key of the wrong type under the store's prefix (a hand fix, another
// program with the same prefix) against a real Redis: it concerns one breaker,
// never the store.

const available = redisServerAvailable();
// Open long enough that the reports still count once the keys are repaired, however loaded the machine.
const OPTIONS: BreakerOptions = { consecutiveFailures: 1, openDurationMs: 10_000 };
const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);

let server: RedisServer;
let admin: Redis;
let prefixSeq = 0;
const opened: { store: RedisBreakerStore; redis: Redis }[] = [];

interface Replica {
  store: RedisBreakerStore;
  payments: Breaker;
  search: Breaker;
  warnings: string[];
  logs: string[];
  /** Both breakers' coordination at the moment each warning was logged. */
  atWarning: {
    payments: BreakerCoordination | undefined;
    search: BreakerCoordination | undefined;
  }[];
}

async function replica(instanceId: string, prefix: string): Promise<Replica> {
  const redis = new Redis(server.port, '127.0.0.1', {
    retryStrategy: () => 50,
    maxRetriesPerRequest: 1,
  });
  const r = { warnings: [], logs: [], atWarning: [] } as unknown as Replica;
  r.store = new RedisBreakerStore({
    redis,
    keyPrefix: prefix,
    instanceId,
    logger: {
      warn: (m) => {
        r.warnings.push(m);
        r.atWarning.push({
          payments: r.payments.snapshot().coordination,
          search: r.search.snapshot().coordination,
        });
      },
      log: keepingAllButQuorum(r.logs),
    },
  });
  opened.push({ store: r.store, redis });
  r.payments = new Breaker('payments', OPTIONS, { coordinator: r.store.coordinator });
  r.search = new Breaker('search', OPTIONS, { coordinator: r.store.coordinator });
  await r.store.hydrate([r.payments, r.search]);
  return r;
}

describe.skipIf(!available)('RedisBreakerStore: a key of the wrong type', () => {
  let prefix: string;
  let stateKey: string;

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.port, '127.0.0.1');
  });

  afterAll(async () => {
    await admin?.quit();
    await server?.kill();
  });

  beforeEach(() => {
    prefix = `k${++prefixSeq}:`;
    stateKey = `${prefix}{payments}:state`;
  });

  afterEach(async () => {
    for (const { store, redis } of opened.splice(0)) {
      await store.close();
      redis.disconnect();
    }
  });

  it('on a write: unshares that breaker alone, logs one line naming the key, deletes the key, and the fleet opens together', async () => {
    const replicas = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    await admin.set(stateKey, 'hand-written');
    const adopted = nextTransition(c.payments, (change) => change.reason === 'shared-open');
    await Promise.all([fail(a.payments), fail(b.payments)]);
    await adopted;
    // The replica that deleted the key says so when its repair's reply arrives, which may be after the others moved on.
    await eventually('the corrupt key reported', () =>
      replicas.some((r) => r.warnings.length > 0) ? true : undefined,
    );

    expect(await admin.type(stateKey)).toBe('hash');
    expect(await admin.hget(stateKey, 'state')).toBe('open');
    // One line for the fleet: the replica that found the key deleted it, the other found it repaired already.
    const warned = replicas.filter((r) => r.warnings.length > 0);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.warnings).toEqual([
      `Circuit breaker "payments": Redis held a string at "${stateKey}", where the store keeps a hash; the store deleted it and the breaker shares its state again. ` +
        `If this comes back, something else writes under keyPrefix "${prefix}": give the store a keyPrefix of its own.`,
    ]);
    // While its keys were repaired, that breaker decided alone; the store's other breaker went on sharing.
    expect(warned[0]!.atWarning).toEqual([
      { payments: { shared: false, storeErrors: 1 }, search: { shared: true, storeErrors: 0 } },
    ]);
    // Redis was reachable all along: no outage was reported, nor its end.
    expect(replicas.flatMap((r) => r.logs)).toEqual([]);
    for (const r of replicas) {
      expect(r.store.shared).toBe(true);
      expect(r.search.snapshot().coordination).toEqual({ shared: true, storeErrors: 0 });
      expect(r.payments.snapshot().coordination!.shared).toBe(true);
    }
    expect(replicas.map((r) => r.payments.lastDecidedState)).toEqual(['open', 'open', 'open']);
  });

  it('on a read: a state key of the wrong type is no outage, and the breaker shares again once it is deleted', async () => {
    const a = await replica('a', prefix);
    await admin.rpush(stateKey, 'x');
    await a.store.reconcile();
    await eventually('the corrupt key reported', () => (a.warnings.length > 0 ? true : undefined));
    expect(await admin.exists(stateKey)).toBe(0);
    await eventually('the breaker shared again', () =>
      a.payments.snapshot().coordination!.shared ? true : undefined,
    );
    expect(a.warnings).toEqual([
      `Circuit breaker "payments": Redis held a list at "${stateKey}", where the store keeps a hash; the store deleted it and the breaker shares its state again. ` +
        `If this comes back, something else writes under keyPrefix "${prefix}": give the store a keyPrefix of its own.`,
    ]);
    expect(a.logs).toEqual([]);
    expect(a.store.shared).toBe(true);
    expect(a.store.storeErrors).toBe(1);
    expect(a.payments.snapshot().coordination).toEqual({ shared: true, storeErrors: 1 });
    expect(a.search.snapshot().coordination).toEqual({ shared: true, storeErrors: 0 });
  });

  it('on the probe permit: a permit key of the wrong type is deleted, and the fleet probe goes on', async () => {
    const [a, b, c] = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    const adopted = nextTransition(c.payments, (change) => change.reason === 'shared-open');
    await Promise.all([fail(a.payments), fail(b.payments)]);
    await adopted;
    const probeKey = `${prefix}{payments}:probe`;
    // With an expiry, so that it is no stale permit (those are taken over): only its type is wrong.
    await admin.hset(probeKey, 'holder', 'x');
    await admin.pexpire(probeKey, 60_000);
    // c follows the open fleet: it asks for the permit (and is refused for now).
    expect(c.store.coordinator.mayProbe(c.payments)).toBe(false);
    await eventually('the corrupt permit key reported', () =>
      c.warnings.length > 0 ? true : undefined,
    );
    expect(await admin.type(probeKey)).not.toBe('hash');
    expect(c.warnings).toEqual([
      `Circuit breaker "payments": Redis held a hash at "${probeKey}", where the store keeps a string; the store deleted it and the breaker shares its state again. ` +
        `If this comes back, something else writes under keyPrefix "${prefix}": give the store a keyPrefix of its own.`,
    ]);
    expect([...a.warnings, ...b.warnings, ...a.logs, ...b.logs, ...c.logs]).toEqual([]);
    // The permit is free again: c's next request wins it.
    await eventually('the permit won', () =>
      c.store.coordinator.mayProbe(c.payments) ? true : undefined,
    );
    expect(await admin.get(probeKey)).toBe('c');
  });
});

describe('CorruptKeys without Redis', () => {
  const replyError = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
  const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

  it("tells a key error (about one breaker's keys) from an outage", () => {
    expect(
      isKeyError(
        replyError(
          'WRONGTYPE Operation against a key holding the wrong kind of value script: 2e9d, on @user_script:1.',
        ),
      ),
    ).toBe(true);
    expect(
      isKeyError(
        replyError(
          'ERR user_script:5: attempt to compare number with nil script: 2e9d, on @user_script:5.',
        ),
      ),
    ).toBe(true);
    expect(isKeyError(replyError("OOM command not allowed when used memory > 'maxmemory'."))).toBe(
      false,
    );
    expect(isKeyError(replyError('BUSY Redis is busy running a script.'))).toBe(false);
    expect(isKeyError(replyError('LOADING Redis is loading the dataset in memory'))).toBe(false);
    expect(isKeyError(new Error('WRONGTYPE but not from Redis'))).toBe(false);
    expect(isKeyError(new Error('Connection is closed.'))).toBe(false);
    expect(isKeyError('WRONGTYPE')).toBe(false);
  });

  it('keeps a breaker whose key error no delete explains isolated until the next reconcile, with one line for the episode', async () => {
    const released: string[] = [];
    const warnings: string[] = [];
    const redis = { eval: () => Promise.resolve([]) } as unknown as Redis;
    const corrupt = new CorruptKeys({
      redis,
      logger: { warn: (m) => warnings.push(m), log: () => undefined },
      keyPrefix: 'p:',
      operationTimeoutMs: 1_000,
      release: (record) => released.push(record.name),
      failed: () => undefined,
    });
    const record = { name: 'payments', keys: breakerKeys('p:', 'payments') } as SharedBreaker;
    const error = replyError(
      'ERR user_script:9: attempt to compare nil with number script: 2e9d, on @user_script:9.',
    );
    corrupt.report(record, error);
    expect(corrupt.isolated(record)).toBe(true);
    await flush();
    // Nothing to delete the first time: most likely another replica repaired it first. Shared again at once, no line.
    expect([released, warnings, corrupt.isolated(record)]).toEqual([['payments'], [], false]);
    corrupt.report(record, error);
    await flush();
    // Again nothing to delete: no delete explains it. Isolated until the next reconcile, and said once.
    expect([released, corrupt.isolated(record)]).toEqual([['payments'], true]);
    expect(warnings).toEqual([
      'Circuit breaker "payments": Redis rejects the store\'s operations on its keys (ERR user_script:9: attempt to compare nil with number script: 2e9d, on @user_script:9.); ' +
        'the breaker decides on its own and the store tries again at every reconcile. Look at "p:{payments}:state", "p:{payments}:opens", "p:{payments}:probe", "p:{payments}:force", "p:{payments}:config" (redis-cli TYPE, DUMP) and delete what the store did not write.',
    ]);
    corrupt.retry();
    expect(released).toEqual(['payments', 'payments']);
    corrupt.report(record, error);
    await flush();
    expect([corrupt.isolated(record), warnings.length]).toEqual([true, 1]);
    // A success while isolated does not end the episode; one after sharing again does, and a new corruption is said again.
    corrupt.healthy(record);
    corrupt.retry();
    corrupt.healthy(record);
    corrupt.report(record, error);
    await flush();
    corrupt.report(record, error);
    await flush();
    expect(warnings).toHaveLength(2);
    expect([corrupt.errorsOf(record), corrupt.total]).toEqual([5, 5]);
  });

  it("a repair that fails on a Cluster takes its breaker's slot down, never the store (wired as the store wires it)", async () => {
    const down = new Error('CLUSTERDOWN Hash slot not served');
    const redis = { eval: () => Promise.reject(down) } as unknown as Redis;
    const outages: string[] = [];
    const slots = new SlotOutages({
      cluster: true,
      failed: (e) => outages.push(`slot: ${(e as Error).message}`),
      up: () => undefined,
      outage: (e) => outages.push(`store: ${(e as Error).message}`),
    });
    const corrupt = new CorruptKeys({
      redis,
      logger: undefined,
      keyPrefix: 'p:',
      operationTimeoutMs: 1_000,
      release: () => undefined,
      failed: (record, error) => slots.keysFailed(record, error),
    });
    const record = { name: 'payments', keys: breakerKeys('p:', 'payments') } as SharedBreaker;
    corrupt.report(
      record,
      replyError('WRONGTYPE Operation against a key holding the wrong kind of value'),
    );
    await flush();
    // Before, the repair's failure was an outage of the store: every breaker local until a read of all succeeded.
    expect([slots.names(), outages]).toEqual([
      ['payments'],
      ['slot: CLUSTERDOWN Hash slot not served'],
    ]);
  });
});

describe('the corrupt-key line', () => {
  it('names every key deleted, each with the type found and the type the store keeps there', () => {
    const found = [
      { key: 'p:{a}:state', type: 'string', expected: 'hash' },
      { key: 'p:{a}:opens', type: 'hash', expected: 'zset' },
    ];
    expect(redisBreakerMessages.corruptKeys('a', found, 'p:')).toBe(
      'Circuit breaker "a": Redis held a string at "p:{a}:state", where the store keeps a hash, and a hash at "p:{a}:opens", where the store keeps a zset; ' +
        'the store deleted them and the breaker shares its state again. If this comes back, something else writes under keyPrefix "p:": give the store a keyPrefix of its own.',
    );
  });
});
