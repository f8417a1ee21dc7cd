import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import { RedisBreakerStore } from '../../lib/redis/index.js';
import { changeKeys, readHead, startHead } from '../../lib/redis/redis-breaker.changes.js';
import { breakerKeys } from '../../lib/redis/redis-breaker.keys.js';
import { DECIMAL_LUA, decimalOf } from '../../lib/redis/redis-breaker.numbers.js';
import { commandStats } from './helpers/command-stats.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';

// A number in a Redis field is read by Lua (the scripts) and by JavaScript
// (the replicas): both must take the same text for a number, or both for
// junk. `0x1p4` was 16 to Lua's tonumber and NaN to Number(): a change log at
// that version made every replica read every breaker at every interval, and a
// config generation of that form refused every fleet reconfiguration.

const available = redisServerAvailable();
const OPTIONS: BreakerOptions = { consecutiveFailures: 1, openDurationMs: 60_000 };

let server: RedisServer;
let admin: Redis;
let prefixSeq = 0;
const opened: { store: RedisBreakerStore; redis: Redis }[] = [];

async function replica(instanceId: string, prefix: string, count: number) {
  const redis = new Redis(server.port, '127.0.0.1');
  const store = new RedisBreakerStore({
    redis,
    keyPrefix: prefix,
    instanceId,
    logger: false,
    // Driven by the test: the timer never fires by itself.
    reconcileIntervalMs: 600_000,
  });
  opened.push({ store, redis });
  const breakers = Array.from(
    { length: count },
    (_, i) => new Breaker(`b${i}`, OPTIONS, { coordinator: store.coordinator }),
  );
  await store.hydrate(breakers);
  return { store, breakers };
}

/** Texts a hand edit, a restore or another program may leave where a number belongs. */
const hostileNumber = fc.oneof(
  fc.constantFrom(
    '0x1p4',
    '0x10',
    '0X1P-2',
    '1e3',
    '1E+2',
    ' 12',
    '12 ',
    '\t7\n',
    '+1',
    '-0',
    '1.',
    '.5',
    '1.5',
    '0.0',
    '007',
    'inf',
    'nan',
    'Infinity',
    '0b101',
    '0o7',
    '1_000',
    '٣',
    '１',
    '',
    '9007199254740993',
    '1'.repeat(40),
    '1'.repeat(41),
  ),
  fc.nat().map(String),
  fc.double({ noNaN: true }).map(String),
  fc.string({ unit: fc.constantFrom(...'0123456789.xXpPeE+- abcdefinINF'), maxLength: 12 }),
);

describe.skipIf(!available)('numbers in Redis fields: one reading for Lua and JavaScript', () => {
  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.port, '127.0.0.1');
  });
  afterAll(async () => {
    await admin?.quit();
    await server?.kill();
  });
  afterEach(async () => {
    for (const { store, redis } of opened.splice(0)) {
      await store.close();
      redis.disconnect();
    }
  });

  it('reads every text as the same number, or as junk, in Lua and in JavaScript (fast-check)', async () => {
    const script = `${DECIMAL_LUA}
local out = {}
for i = 1, #ARGV do
  local n = decimal(ARGV[i])
  out[i] = n and string.format('%.17g', n) or 'junk'
end
return out`;
    await fc.assert(
      fc.asyncProperty(fc.array(hostileNumber, { minLength: 1, maxLength: 50 }), async (texts) => {
        const lua = (await admin.eval(script, 0, ...texts)) as string[];
        const js = texts.map((text) => {
          const n = decimalOf(text);
          return Number.isNaN(n) ? 'junk' : n;
        });
        expect(lua.map((v) => (v === 'junk' ? v : Number(v)))).toEqual(js);
      }),
      { seed: 25_019, numRuns: 200 },
    );
  });

  it("agrees with the change log's start script on which heads are junk (fast-check)", async () => {
    const prefix = `wn${++prefixSeq}:`;
    const keys = changeKeys(prefix);
    await fc.assert(
      fc.asyncProperty(hostileNumber, async (version) => {
        await admin.del(keys.version, keys.log);
        await admin.hset(keys.version, { epoch: '1:a', version, trimmed: '0' });
        const js = await readHead(admin, keys);
        const started = await startHead(admin, keys, 2, 'b');
        // Lua starts a new count (another epoch) exactly when JavaScript cannot follow the head.
        expect({ version, restarted: started?.epoch !== '1:a' }).toEqual({
          version,
          restarted: js === undefined,
        });
        expect(started).toBeDefined();
      }),
      { seed: 25_191, numRuns: 300 },
    );
  });

  it('repairs a change log version written as a hex float: the next quiet reconcile is one command again', async () => {
    const prefix = `wn${++prefixSeq}:`;
    const [, b] = [await replica('a', prefix, 100), await replica('b', prefix, 100)];
    const { version } = changeKeys(prefix);
    const epoch = await admin.hget(version, 'epoch');
    await admin.hset(version, 'version', '0x1p4');
    // The first reconcile cannot follow the head: it reads everything once, and the count starts again.
    await b.store.reconcile({ changedOnly: true });
    await admin.config('RESETSTAT');
    for (let round = 0; round < 3; round++) await b.store.reconcile({ changedOnly: true });
    expect(await commandStats(admin)).toEqual({ hmget: 3 });
    expect(await admin.hget(version, 'epoch')).not.toBe(epoch);
    expect(await admin.hget(version, 'version')).toBe('0');
  });

  it('replaces a config generation written as a hex float, and the fleet reconfiguration resolves', async () => {
    const prefix = `wn${++prefixSeq}:`;
    const [a, b] = [await replica('a', prefix, 1), await replica('b', prefix, 1)];
    const config = breakerKeys(prefix, 'b0').config;
    await admin.hset(config, {
      patch: JSON.stringify({ consecutiveFailures: 9 }),
      generation: '0x1p4',
      origin: 'elsewhere',
      at: '1',
    });
    const done = await a.store.fleet.reconfigure(a.breakers[0]!, {
      ...OPTIONS,
      consecutiveFailures: 4,
    });
    expect(done.fleet.breaker).toBe('b0');
    const stored = await admin.hgetall(config);
    expect(stored.generation).toBe(String(done.fleet.generation));
    expect(JSON.parse(stored.patch!)).toEqual({ ...OPTIONS, consecutiveFailures: 4 });
    await b.store.reconcile();
    expect(b.breakers[0]!.config.consecutiveFailures).toBe(4);
  });
});
