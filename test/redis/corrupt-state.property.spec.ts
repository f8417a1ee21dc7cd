import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Breaker,
  type BreakerCoordination,
  type BreakerOptions,
  type StateChangeEvent,
} from '../../lib/core/index.js';
import { RedisBreakerStore } from '../../lib/redis/index.js';
import {
  GENERATION_MAX_LEAD_MS,
  GENERATION_TRUSTED_LEAD_MS,
  KEY_TTL_MS,
  MAX_TIMER_MS,
} from '../../lib/redis/redis-breaker.constants.js';
import {
  RedisBreakerCoordinator,
  type FleetLink,
} from '../../lib/redis/redis-breaker.coordinator.js';
import { longestOpenMs } from '../../lib/redis/redis-breaker.durations.js';
import { registryKeys, REPLICA_TTL_INTERVALS } from '../../lib/redis/redis-breaker.fleet-view.js';
import { breakerKeys, channelOf, type BreakerKeys } from '../../lib/redis/redis-breaker.keys.js';
import { REDIS_BREAKER_SCRIPTS as SCRIPTS } from '../../lib/redis/redis-breaker.scripts.js';
import {
  decodeSignal,
  parseMessage,
  type FleetState,
} from '../../lib/redis/redis-breaker.signal.js';
import {
  decodeConfigHash,
  decodeForceHash,
  orderOf,
} from '../../lib/redis/redis-breaker.fleet-records.js';
import { FleetOrders, type RestoredOrder } from '../../lib/redis/redis-breaker.fleet-orders.js';
import { nextMoment } from '../../lib/redis/redis-breaker.moments.js';
import { FLEET_SCRIPTS } from '../../lib/redis/redis-breaker.fleet-scripts.js';
import { FleetOrderError } from '../../lib/redis/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { RedisServer, redisServerAvailable } from './helpers/redis-server.js';
import { keepingAllButQuorum } from './helpers/log-lines.js';

// Corrupt Redis state, generated: junk generations and fields, keys of the
// wrong type, permits without expiry, malformed and forged channel messages,
// and the same for fleet orders (force and config records, order messages).
// Invariants: no Redis error reaches a caller, only the breaker whose keys are
// corrupt stops sharing (and never the store), and the fleet converges again
// once the junk is repaired or gone. Seeds are fixed: a failure replays as is.

const T0 = 1_767_000_000_000;
/** Scenario runs of three real replicas: about 0.1 s each, a few seconds in all; raised only with the whole file kept under a minute on a loaded machine. */
const FLEET_RUNS = 80;
/** The same for fleet orders over corrupt force and config records. */
const ORDER_RUNS = 40;
const SAFE = Number.MAX_SAFE_INTEGER;

// ---------------------------------------------------------------------------
// Generators

/** Number-ish JSON tokens: huge, negative, fractional, non-numbers, and text that is no JSON at all. */
const numberToken = fc.oneof(
  fc.constantFrom(
    '1e308',
    '1e999',
    '-1e999',
    '9007199254740992',
    '9007199254740993',
    '18014398509481984',
    '-1',
    '-0',
    '0.5',
    'NaN',
    'Infinity',
    'null',
    'true',
    '"7"',
    '[]',
    '{}',
    '0x10',
    '',
  ),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
);
/** A plausible generation or time around T0 (a valid one, or one too far ahead). */
const plausible = fc
  .oneof(
    fc.integer({ min: T0 - 10_000, max: T0 + 10_000 }),
    fc.integer({ min: T0 + GENERATION_TRUSTED_LEAD_MS, max: T0 + GENERATION_MAX_LEAD_MS + 10_000 }),
    fc.constantFrom(
      T0 + GENERATION_MAX_LEAD_MS,
      T0 + GENERATION_MAX_LEAD_MS + 1,
      SAFE,
      SAFE - 1,
      0,
    ),
  )
  .map(String);
const field = fc.oneof(numberToken, plausible);
const text = fc.oneof(
  fc.constantFrom('"payments"', '"other"', '"open"', '"closed"', '"half-open"', '1', 'null', '""'),
  fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
);

/** Something published on the channel: a signal with any field junk or missing, a truncated one, or arbitrary text and JSON. */
const channelMessage = fc.oneof(
  fc
    .record(
      {
        v: fc.oneof(fc.constant('1'), numberToken),
        b: fc.oneof(fc.constant('"payments"'), text),
        s: fc.oneof(fc.constantFrom('"open"', '"closed"'), text),
        u: field,
        g: field,
        o: fc.oneof(fc.constant('"forger"'), text),
        a: field,
      },
      { requiredKeys: [] },
    )
    .chain((fields) => {
      const body = `{${Object.entries(fields)
        .map(([k, v]) => `"${k}":${v}`)
        .join(',')}}`;
      return fc.oneof(
        { weight: 4, arbitrary: fc.constant(body) },
        { weight: 1, arbitrary: fc.nat(body.length).map((n) => body.slice(0, n)) },
      );
    }),
  fc.string({ maxLength: 40 }),
  fc.json({ maxDepth: 2 }),
);

/** A fleet order on the channel (a force or a reconfiguration) with any field junk or missing, or truncated. */
const orderMessage = fc
  .record(
    {
      v: fc.oneof(fc.constant('1'), numberToken),
      k: fc.oneof(fc.constantFrom('"force"', '"config"'), text),
      b: fc.oneof(fc.constant('"payments"'), text),
      f: fc.oneof(fc.constantFrom('"open"', '"closed"', '"disabled"', '"released"'), text),
      r: fc.oneof(fc.constantFrom('"drill"', '""', '"  "'), text, numberToken),
      y: fc.oneof(fc.constantFrom('""', '"ops"'), text, numberToken),
      u: fc.oneof(fc.constant('0'), field),
      p: fc.oneof(
        fc.constantFrom('"{}"', '"{\\"timeoutMs\\":2000}"', '"[]"', '"null"', '"{"'),
        text,
        numberToken,
      ),
      g: field,
      o: fc.oneof(fc.constant('"forger"'), text),
      a: field,
    },
    { requiredKeys: [] },
  )
  .chain((fields) => {
    const body = `{${Object.entries(fields)
      .map(([k, v]) => `"${k}":${v}`)
      .join(',')}}`;
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant(body) },
      { weight: 1, arbitrary: fc.nat(body.length).map((n) => body.slice(0, n)) },
    );
  });

/** A force or config hash as junk may leave it: any field junk, missing or extra. */
const junkOrderHash = fc.record(
  {
    state: fc.oneof(
      fc.constantFrom('open', 'closed', 'disabled', 'released'),
      fc.string({ maxLength: 5 }),
    ),
    reason: fc.oneof(fc.constantFrom('drill', '', ' '), fc.string({ maxLength: 5 })),
    by: fc.string({ maxLength: 3 }),
    until: fc.oneof(fc.constant('0'), field),
    patch: fc.oneof(
      fc.constantFrom('{}', '{"timeoutMs":2000}', '[]', 'null', '{', ''),
      fc.string({ maxLength: 6 }),
    ),
    generation: field,
    origin: fc.string({ maxLength: 3 }),
    at: field,
    junk: fc.string({ maxLength: 3 }),
  },
  { requiredKeys: [] },
);

// ---------------------------------------------------------------------------
// Signal parsing and the coordinator: no Redis, thousands of runs

describe('corrupt state: signals (in process)', () => {
  it('reads every message as a well-formed signal or nothing, and never throws (5,000 runs)', () => {
    fc.assert(
      fc.property(channelMessage, (message) => {
        const fleet = decodeSignal(message);
        if (fleet === undefined) return;
        expect(['open', 'closed']).toContain(fleet.state);
        expect(typeof fleet.name).toBe('string');
        expect(typeof fleet.origin).toBe('string');
        for (const n of [fleet.openUntil, fleet.generation, fleet.at]) {
          expect(Number.isFinite(n) && n >= 0 && n <= SAFE).toBe(true);
        }
      }),
      { seed: 4_001, numRuns: 5_000 },
    );
  });

  it('moves a breaker only on well-formed signals, and follows the fleet again after one read of the state hash (3,000 runs)', () => {
    const link: FleetLink = {
      isShared: () => true,
      storeErrors: () => 0,
      write: () => undefined,
      requestPermit: () => undefined,
      renewPermit: () => undefined,
      transitioned: () => undefined,
    };
    const options: BreakerOptions = { consecutiveFailures: 1, openDurationMs: 1_000 };
    fc.assert(
      fc.property(
        fc.array(channelMessage, { maxLength: 15 }),
        fc.boolean(),
        (messages, viaSignal) => {
          const clock = new ManualClock(T0);
          const coordinator = new RedisBreakerCoordinator('p:', link);
          const breaker = new Breaker('payments', options, { clock, coordinator });
          const record = coordinator.register(breaker)!;
          const changes: StateChangeEvent[] = [];
          breaker.on('stateChange', (change) => changes.push(change));
          for (const message of messages) {
            const before = changes.length;
            const fleet = decodeSignal(message);
            if (fleet !== undefined) coordinator.apply(fleet);
            // Nothing malformed, and nothing further ahead than a clock could be, moves the breaker.
            if (
              fleet === undefined ||
              fleet.name !== 'payments' ||
              fleet.generation > T0 + GENERATION_MAX_LEAD_MS
            )
              expect(changes.length).toBe(before);
          }
          expect(record.generation).toBeLessThanOrEqual(T0 + GENERATION_MAX_LEAD_MS);
          // The periodic read: what Redis holds.
          const held: FleetState = {
            name: 'payments',
            state: 'closed',
            openUntil: 0,
            generation: T0 - 5_000,
            origin: 'a',
            at: T0 - 5_000,
          };
          coordinator.apply(held, true);
          // The fleet's next change, a minute later: generation max(previous + 1, now). It is followed, by signal or by read.
          clock.advance(GENERATION_TRUSTED_LEAD_MS + 1);
          const now = clock.now();
          coordinator.apply(
            {
              name: 'payments',
              state: 'open',
              openUntil: now + 500,
              generation: now,
              origin: 'b',
              at: now,
            },
            !viaSignal,
          );
          // (A forged open that looked real may have opened it for longer already: an adoption only ever extends.)
          expect([breaker.lastDecidedState, record.generation]).toEqual(['open', now]);
          coordinator.apply(
            {
              name: 'payments',
              state: 'closed',
              openUntil: 0,
              generation: now + 1,
              origin: 'b',
              at: now + 1,
            },
            !viaSignal,
          );
          expect(breaker.lastDecidedState).toBe('closed');
          coordinator.close();
        },
      ),
      { seed: 4_002, numRuns: 3_000 },
    );
  });

  it('undoes whatever was only heard on the channel once a read finds no state hash, keeping an open of its own (2,000 runs)', async () => {
    const link: FleetLink = {
      isShared: () => true,
      storeErrors: () => 0,
      write: () => undefined,
      requestPermit: () => undefined,
      renewPermit: () => undefined,
      transitioned: () => undefined,
    };
    const options: BreakerOptions = { consecutiveFailures: 1, openDurationMs: 1_000 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(channelMessage, { maxLength: 15 }),
        fc.boolean(),
        async (messages, own) => {
          const clock = new ManualClock(T0);
          const coordinator = new RedisBreakerCoordinator('p:', link);
          const breaker = new Breaker('payments', options, { clock, coordinator });
          const record = coordinator.register(breaker)!;
          if (own)
            await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
          const ownUntil = breaker.snapshot().openUntil;
          for (const message of messages) {
            const fleet = decodeSignal(message);
            if (fleet !== undefined) coordinator.apply(fleet);
          }
          // (A forged close that looked real may have closed an open of its own already, as a real one would.)
          const ownOpen = own && breaker.lastDecidedState === 'open';
          // A read that went out after every message and found no state hash: none of them was Redis'.
          coordinator.noneHeld(record, nextMoment());
          expect(breaker.lastDecidedState).toBe(ownOpen ? 'open' : 'closed');
          expect([record.generation, record.fleetOpen]).toEqual([0, false]);
          // Its own open period again, not a forged longer one (the clock has not moved).
          if (ownOpen) expect(breaker.snapshot().openUntil).toBe(ownUntil);
          // The fleet's next real state is applied, whatever generation the forged ones had.
          const now = clock.now();
          coordinator.apply(
            {
              name: 'payments',
              state: 'open',
              openUntil: now + 500,
              generation: now,
              origin: 'b',
              at: now,
            },
            true,
          );
          expect([breaker.lastDecidedState, record.generation, record.fleetOpen]).toEqual([
            'open',
            now,
            true,
          ]);
          coordinator.close();
        },
      ),
      { seed: 4_008, numRuns: 2_000 },
    );
  });
});

describe('corrupt state: fleet orders (in process)', () => {
  it('reads every message as a well-formed order or nothing, and every hash as a record, none or junk, never throwing (5,000 runs)', () => {
    fc.assert(
      fc.property(orderMessage, junkOrderHash, (message, hash) => {
        const raw = parseMessage(message);
        const order = raw === undefined ? undefined : orderOf(raw);
        const records = [
          order,
          decodeForceHash('payments', hash) ?? undefined,
          decodeConfigHash('payments', hash) ?? undefined,
        ];
        for (const record of records) {
          if (record === undefined) continue;
          for (const n of [record.generation, record.at])
            expect(Number.isFinite(n) && n >= 0 && n <= SAFE).toBe(true);
          if (record.kind === 'force') {
            expect(['open', 'closed', 'disabled', 'released']).toContain(record.state);
            expect(Number.isFinite(record.until) && record.until >= 0).toBe(true);
            if (record.state !== 'released') expect(record.reason.trim()).not.toBe('');
          } else {
            expect(typeof record.patch === 'object' && !Array.isArray(record.patch)).toBe(true);
          }
        }
      }),
      { seed: 4_005, numRuns: 5_000 },
    );
  });

  it('never merges or writes back a reconfiguration it refused, whatever the order of valid and refused records (2,000 runs)', () => {
    // Patches as Redis may hold them: most valid, some that no replica can apply.
    const patch = fc.oneof(
      fc.record({ timeoutMs: fc.integer({ min: 1, max: 60_000 }) }),
      fc.record({ openDurationMs: fc.integer({ min: 1, max: 60_000 }) }),
      fc.record({ openDurationMs: fc.integer({ min: -1_000, max: 0 }) }),
      fc.record({ failureRateThreshold: fc.constantFrom(-1, 2, 0.5) }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(patch, fc.boolean()), { minLength: 1, maxLength: 8 }),
        (steps) => {
          const clock = new ManualClock(T0);
          const link: FleetLink = {
            isShared: () => true,
            storeErrors: () => 0,
            write: () => undefined,
            requestPermit: () => undefined,
            renewPermit: () => undefined,
            transitioned: () => undefined,
          };
          const restored: RestoredOrder[] = [];
          const orders = new FleetOrders({
            logger: undefined,
            refuse: () => undefined,
            restore: (_record, order) => restored.push(order),
          });
          // As the module does: patches over the breaker's own options, merged into the fleet's.
          orders.reconfigurer = {
            apply: (breaker, p) => breaker.reconfigure({ timeoutMs: 5_000, ...p }),
            merge: (previous, p) => ({ ...previous, ...p }),
          };
          const coordinator = new RedisBreakerCoordinator('p:', link);
          const breaker = new Breaker('payments', { timeoutMs: 5_000 }, { clock, coordinator });
          const record = coordinator.register(breaker)!;
          const applies = (p: BreakerOptions) => {
            try {
              new Breaker('check', { timeoutMs: 5_000, ...p });
              return true;
            } catch {
              return false;
            }
          };
          let applied: BreakerOptions | undefined;
          steps.forEach(([p, viaRead], i) => {
            const config = {
              kind: 'config' as const,
              name: 'payments',
              patch: p,
              generation: T0 + i + 1,
              origin: 'x',
              at: T0,
            };
            if (viaRead) orders.fromHashes(record, undefined, config, nextMoment());
            else orders.apply(record, config);
            if (applies(p)) applied = p;
            // The fleet's patch this replica merges its next order over is always one it applies.
            expect(orders.patchOf(record)).toEqual(applied);
          });
          // Redis loses the record: what is written back is the patch this replica applies, never a refused one.
          orders.fromHashes(record, undefined, null, nextMoment());
          for (const order of restored) {
            expect(order).toEqual({ kind: 'config', patch: applied });
            expect(applies((order as { patch: BreakerOptions }).patch)).toBe(true);
          }
          coordinator.close();
        },
      ),
      { seed: 4_010, numRuns: 2_000 },
    );
  });

  it('obeys only well-formed orders, never throws, and follows what Redis holds after one read (3,000 runs)', () => {
    fc.assert(
      fc.property(fc.array(orderMessage, { maxLength: 12 }), junkOrderHash, (messages, hash) => {
        const clock = new ManualClock(T0);
        const link: FleetLink = {
          isShared: () => true,
          storeErrors: () => 0,
          write: () => undefined,
          requestPermit: () => undefined,
          renewPermit: () => undefined,
          transitioned: (record, change) => orders.transitioned(record, change),
        };
        const warnings: string[] = [];
        const restored: RestoredOrder[] = [];
        const orders = new FleetOrders({
          logger: { warn: (m) => warnings.push(m), log: () => undefined },
          refuse: () => undefined,
          restore: (_record, order) => restored.push(order),
        });
        const coordinator = new RedisBreakerCoordinator('p:', link);
        const breaker = new Breaker('payments', { timeoutMs: 5_000 }, { clock, coordinator });
        const record = coordinator.register(breaker)!;
        for (const message of messages) {
          const raw = parseMessage(message);
          const order = raw === undefined ? undefined : orderOf(raw);
          const before = JSON.stringify([breaker.snapshot().forced, breaker.config.timeoutMs]);
          if (order !== undefined && order.name === 'payments') orders.apply(record, order);
          // Nothing malformed, and nothing further ahead than a clock could be, changes the breaker.
          if (
            order === undefined ||
            order.name !== 'payments' ||
            order.generation > T0 + GENERATION_MAX_LEAD_MS
          )
            expect(JSON.stringify([breaker.snapshot().forced, breaker.config.timeoutMs])).toBe(
              before,
            );
        }
        // Junk in Redis is ignored; whatever it is, a valid record read afterwards is what the breaker holds.
        orders.fromHashes(
          record,
          decodeForceHash('payments', hash),
          decodeConfigHash('payments', hash),
          nextMoment(),
        );
        const now = clock.now();
        orders.fromHashes(
          record,
          {
            kind: 'force',
            name: 'payments',
            state: 'open',
            reason: 'held',
            by: undefined,
            until: 0,
            generation: now - 1,
            origin: 'a',
            at: now - 1,
          },
          {
            kind: 'config',
            name: 'payments',
            patch: { timeoutMs: 1_234 },
            generation: now - 1,
            origin: 'a',
            at: now - 1,
          },
          nextMoment(),
        );
        expect(breaker.snapshot().forced).toMatchObject({ state: 'open', reason: 'held' });
        expect(breaker.config.timeoutMs).toBe(1_234);
        // And what Redis lost, the replica that holds it writes again, and keeps obeying.
        orders.fromHashes(record, null, null, nextMoment());
        expect(breaker.snapshot().forced).toMatchObject({ state: 'open', reason: 'held' });
        expect(restored).toEqual([
          { kind: 'force', state: 'open', reason: 'held', by: undefined, until: 0 },
          { kind: 'config', patch: { timeoutMs: 1_234 } },
        ]);
        for (const warning of warnings)
          expect(warning).toMatch(
            /^Circuit breaker "payments": this replica cannot apply the fleet's reconfiguration/,
          );
        coordinator.close();
      }),
      { seed: 4_006, numRuns: 3_000 },
    );
  });
});

// ---------------------------------------------------------------------------
// Against a real Redis

const available = redisServerAvailable();

describe.skipIf(!available)('corrupt state: against a real Redis', () => {
  let server: RedisServer;
  let admin: Redis;
  let listener: Redis;
  const signals: string[] = [];

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.port, '127.0.0.1');
    listener = new Redis(server.port, '127.0.0.1');
    listener.on('message', (_channel: string, message: string) => signals.push(message));
    await listener.subscribe(channelOf('scripts:'));
  });

  afterAll(async () => {
    await listener?.quit();
    await admin?.quit();
    await server?.kill();
  });

  it('repairs any junk in the state hash: every generation written is in range and grows, every signal reads back (300 runs)', async () => {
    let run = 0;
    const junkHash = fc.record(
      {
        state: fc.oneof(fc.constantFrom('open', 'closed'), fc.string({ maxLength: 5 })),
        openUntil: field,
        generation: field,
        at: field,
      },
      { requiredKeys: [] },
    );
    const op = fc.record({
      kind: fc.constantFrom('open', 'reopen', 'close'),
      instance: fc.constantFrom('a', 'b', 'c'),
      step: fc.nat(3_000),
      openMs: fc.integer({ min: 1, max: 5_000 }),
    });
    await fc.assert(
      fc.asyncProperty(
        junkHash,
        fc.array(op, { minLength: 1, maxLength: 6 }),
        async (junk, ops) => {
          const name = `g${++run}`;
          const keys = breakerKeys('scripts:', name);
          if (Object.keys(junk).length > 0) await admin.hset(keys.state, junk);
          signals.length = 0;
          let now = T0 + run * 10_000;
          let last = -1;
          for (const { kind, instance, step, openMs } of ops) {
            now += step;
            if (kind === 'close')
              await admin.eval(
                SCRIPTS.close,
                3,
                keys.state,
                keys.opens,
                keys.probe,
                instance,
                now,
                channelOf('scripts:'),
                name,
                KEY_TTL_MS,
              );
            else
              await admin.eval(
                SCRIPTS.open,
                3,
                keys.state,
                keys.opens,
                keys.probe,
                instance,
                now + openMs,
                now,
                1,
                kind === 'reopen' ? '1' : '0',
                channelOf('scripts:'),
                name,
                KEY_TTL_MS,
              );
            const stored = await admin.hget(keys.state, 'generation');
            if (stored === null) continue;
            const generation = Number(stored);
            // Repaired or grown, never junk once a script has run.
            expect(
              Number.isFinite(generation) &&
                generation >= 0 &&
                generation <= now + GENERATION_MAX_LEAD_MS,
            ).toBe(true);
            expect(generation).toBeGreaterThanOrEqual(last);
            last = generation;
          }
          await admin.ping();
          const published = signals.map((message) => decodeSignal(message));
          expect(published.every((fleet) => fleet !== undefined)).toBe(true);
          const generations = published.map((fleet) => fleet!.generation);
          expect(generations).toEqual([...generations].sort((x, y) => x - y));
          expect(new Set(generations).size).toBe(generations.length);
        },
      ),
      { seed: 4_003, numRuns: 300 },
    );
  });

  it('replaces any junk in a force or config hash whole: every generation written is in range and grows, every signal reads back (200 runs)', async () => {
    let run = 0;
    const step = fc.record({
      kind: fc.constantFrom('force', 'release', 'config'),
      instance: fc.constantFrom('a', 'b'),
      step: fc.nat(3_000),
    });
    await fc.assert(
      fc.asyncProperty(
        junkOrderHash,
        fc.array(step, { minLength: 1, maxLength: 5 }),
        async (junk, steps) => {
          const name = `o${++run}`;
          const keys = breakerKeys('scripts:', name);
          if (Object.keys(junk).length > 0) {
            await admin.hset(keys.force, junk);
            await admin.hset(keys.config, junk);
          }
          signals.length = 0;
          let now = T0 + run * 10_000;
          const last = { force: -1, config: -1 };
          for (const { kind, instance, step: ms } of steps) {
            now += ms;
            if (kind === 'config') {
              // What a replica knows: the generation of a record it obeyed, none for junk.
              const known = decodeConfigHash(name, await admin.hgetall(keys.config));
              const write = (expected: unknown) =>
                admin.eval(
                  FLEET_SCRIPTS.config,
                  1,
                  keys.config,
                  instance,
                  now,
                  String(expected),
                  '{"timeoutMs":2000}',
                  channelOf('scripts:'),
                  name,
                ) as Promise<unknown[]>;
              let reply = await write(
                known && known.generation <= now + GENERATION_MAX_LEAD_MS ? known.generation : 0,
              );
              // Refused once at most: the stored generation comes back, and the writer merges over it.
              if (reply[0] === 0) reply = await write(reply[1]);
              expect(reply[0]).toBe(1);
            } else {
              await admin.eval(
                FLEET_SCRIPTS.force,
                1,
                keys.force,
                instance,
                now,
                kind === 'force' ? 'open' : 'released',
                kind === 'force' ? 'drill' : '',
                '',
                0,
                channelOf('scripts:'),
                name,
                KEY_TTL_MS,
              );
            }
            const key = kind === 'config' ? 'config' : 'force';
            const hash = await admin.hgetall(keys[key]);
            // Replaced whole: no junk field survives, and the record reads back.
            const record =
              key === 'force' ? decodeForceHash(name, hash) : decodeConfigHash(name, hash);
            expect(record).toBeTruthy();
            expect(Object.keys(hash)).not.toContain('junk');
            const generation = record!.generation;
            expect(generation <= now + GENERATION_MAX_LEAD_MS).toBe(true);
            expect(generation).toBeGreaterThan(last[key]);
            last[key] = generation;
          }
          await admin.ping();
          const published = signals.map((message) => {
            const raw = parseMessage(message);
            return raw === undefined ? undefined : orderOf(raw);
          });
          expect(published).toHaveLength(steps.length);
          expect(published.every((order) => order !== undefined && order.name === name)).toBe(true);
        },
      ),
      { seed: 4_007, numRuns: 200 },
    );
  });

  describe('a fleet of three replicas', () => {
    const OPTIONS: BreakerOptions = {
      consecutiveFailures: 1,
      openDurationMs: 1_000,
      halfOpen: { maxWaitMs: 1_000 },
    };
    const clock = new ManualClock(T0);
    interface Replica {
      store: RedisBreakerStore;
      warnings: string[];
      logs: string[];
      breakers?: { target: Breaker; bystander: Breaker };
      /** Both breakers' coordination at the moment of each warning. */
      atWarning: { target?: BreakerCoordination; bystander?: BreakerCoordination }[];
    }
    let replicas: Replica[] = [];

    /** Three replicas of their own per run: the periodic read covers only this run's breakers, so runs stay equally cheap. */
    function startFleet(prefix: string): Replica[] {
      return ['a', 'b', 'c'].map((id) => {
        const replica: Replica = { warnings: [], logs: [], atWarning: [] } as unknown as Replica;
        // Deadlines far beyond a loaded machine's latency: a slow answer must not pass for an outage here.
        replica.store = new RedisBreakerStore({
          redis: new Redis(server.port, '127.0.0.1'),
          keyPrefix: prefix,
          instanceId: id,
          operationTimeoutMs: 20_000,
          hydrateTimeoutMs: 20_000,
          closeClient: true,
          logger: {
            warn: (m) => {
              replica.warnings.push(m);
              replica.atWarning.push({
                target: replica.breakers?.target.snapshot().coordination,
                bystander: replica.breakers?.bystander.snapshot().coordination,
              });
            },
            log: keepingAllButQuorum(replica.logs),
          },
        });
        return replica;
      });
    }

    afterAll(async () => {
      for (const { store } of replicas) await store.close();
    });

    type Corruption =
      | { kind: 'field'; field: 'generation' | 'openUntil' | 'at' | 'state'; value: string }
      | {
          kind: 'wrong-type';
          key: keyof BreakerKeys;
          type: 'string' | 'list' | 'set' | 'hash' | 'zset';
          ttl: boolean;
        }
      | { kind: 'permit-without-ttl' }
      | { kind: 'junk-report'; score: string };
    const corruption: fc.Arbitrary<Corruption> = fc.oneof(
      fc.record({
        kind: fc.constant('field' as const),
        field: fc.constantFrom(
          'generation' as const,
          'openUntil' as const,
          'at' as const,
          'state' as const,
        ),
        value: fc.oneof(numberToken, plausible),
      }),
      fc
        .record({
          kind: fc.constant('wrong-type' as const),
          key: fc.constantFrom('state' as const, 'opens' as const, 'probe' as const),
          type: fc.constantFrom(
            'string' as const,
            'list' as const,
            'set' as const,
            'hash' as const,
            'zset' as const,
          ),
          ttl: fc.boolean(),
        })
        .filter((c) => c.type !== { state: 'hash', opens: 'zset', probe: 'string' }[c.key]),
      fc.constant({ kind: 'permit-without-ttl' as const }),
      fc.record({
        kind: fc.constant('junk-report' as const),
        score: fc.constantFrom(
          '1e308',
          '9007199254740991',
          'inf',
          String(T0 + 2 * GENERATION_MAX_LEAD_MS),
        ),
      }),
    );

    async function apply(c: Corruption, keys: BreakerKeys): Promise<void> {
      // A junk field or report lands in a key of the right type: one made wrong by an earlier corruption is replaced.
      const ofType = async (key: string, type: string) =>
        void (['none', type].includes(await admin.type(key)) ? undefined : await admin.del(key));
      if (c.kind === 'field')
        return void (
          await ofType(keys.state, 'hash'),
          await admin.hset(keys.state, c.field, c.value)
        );
      if (c.kind === 'permit-without-ttl') return void (await admin.set(keys.probe, 'ghost'));
      if (c.kind === 'junk-report')
        return void (
          await ofType(keys.opens, 'zset'),
          await admin.zadd(keys.opens, c.score, 'junk')
        );
      const key = keys[c.key];
      await admin.del(key);
      if (c.type === 'string') await admin.set(key, 'junk');
      else if (c.type === 'list') await admin.rpush(key, 'junk');
      else if (c.type === 'set') await admin.sadd(key, 'junk');
      else if (c.type === 'hash') await admin.hset(key, 'junk', '1');
      else await admin.zadd(key, 1, 'junk');
      if (c.ttl) await admin.pexpire(key, 60_000);
    }

    /** Waits for `done`, reading the shared state back on every replica in between (a reconcile, sooner than its interval). */
    async function converge(what: string, done: () => Promise<boolean> | boolean): Promise<void> {
      const deadline = Date.now() + 15_000;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`The fleet did not converge: ${what}.`);
        await Promise.all(replicas.map((r) => r.store.reconcile()));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }

    it(`keeps callers free of Redis errors, unshares only the corrupted breaker, and converges again (${FLEET_RUNS} runs)`, async () => {
      let run = 0;
      const outcomes = new Set<string>();
      const durations: number[] = [];
      let corruptLines = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(corruption, { maxLength: 3 }),
          fc.array(corruption, { maxLength: 3 }),
          fc.array(channelMessage, { maxLength: 6 }),
          async (before, whileOpen, forged) => {
            const name = `p${++run}`;
            const prefix = `fleet${run}:`;
            const started = Date.now();
            // A run that failed left its replicas: shrinking goes on with fresh ones.
            for (const { store } of replicas.splice(0)) await store.close();
            replicas = startFleet(prefix);
            const keys = breakerKeys(prefix, name);
            const target = replicas.map(
              (r) => new Breaker(name, OPTIONS, { coordinator: r.store.coordinator, clock }),
            );
            const bystander = replicas.map(
              (r) => new Breaker(`s${run}`, OPTIONS, { coordinator: r.store.coordinator, clock }),
            );
            replicas.forEach(
              (r, i) => (r.breakers = { target: target[i]!, bystander: bystander[i]! }),
            );
            await Promise.all(replicas.map((r, i) => r.store.hydrate([target[i]!, bystander[i]!])));
            const call = async (breaker: Breaker, fn: () => Promise<string>) => {
              const outcome = await breaker.execute(fn).then(
                (value) => value,
                (error: { message?: string; reason?: string }) =>
                  error.reason === undefined
                    ? `error: ${error.message}`
                    : `rejected: ${error.reason}`,
              );
              // A caller sees its own result, its own error, or the breaker's rejection: never Redis.
              expect(['ok', 'error: down', 'rejected: open', 'rejected: half-open-busy']).toContain(
                outcome,
              );
              outcomes.add(outcome);
            };
            const forge = async (messages: string[]) => {
              // Malformed, forged and aimed at this breaker: the name is the only field a forger has to get right.
              for (const message of messages)
                await admin.publish(
                  channelOf(prefix),
                  message.replaceAll('"payments"', JSON.stringify(name)),
                );
            };
            const stillShared = () => {
              for (const [i, r] of replicas.entries()) {
                expect(r.store.shared).toBe(true);
                expect(bystander[i]!.snapshot().coordination).toEqual({
                  shared: true,
                  storeErrors: 0,
                });
              }
            };

            for (const c of before) await apply(c, keys);
            await forge(forged.slice(0, 3));
            await Promise.all([
              call(target[0]!, () => Promise.reject(new Error('down'))),
              call(target[1]!, () => Promise.reject(new Error('down'))),
            ]);
            await converge('every replica open after two reports', () =>
              target.every((b) => b.lastDecidedState === 'open'),
            );
            stillShared();

            for (const c of whileOpen) await apply(c, keys);
            await forge(forged.slice(3));
            clock.advance(longestOpenMs(target[0]!.config) + 1);
            await converge('every replica closed after the fleet probe', async () => {
              // Time passes for the breakers too: a replica that lost the permit asks again when the holder's time is up.
              clock.advance(50);
              await Promise.all(
                target.map((b) =>
                  b.lastDecidedState === 'closed'
                    ? undefined
                    : call(b, () => Promise.resolve('ok')),
                ),
              );
              return target.every((b) => b.lastDecidedState === 'closed');
            });
            stillShared();
            // Whatever was junk is repaired or gone: each key is of its type, or absent.
            expect(['hash', 'none']).toContain(await admin.type(keys.state));
            expect(['zset', 'none']).toContain(await admin.type(keys.opens));
            expect(['string', 'none']).toContain(await admin.type(keys.probe));
            for (const r of replicas) {
              // Redis was reachable all along; a warning is only ever about a corrupt key of this run's breaker.
              expect(r.logs).toEqual([]);
              for (const warning of r.warnings)
                expect(warning).toMatch(
                  new RegExp(`^Circuit breaker "${name}": Redis (held|rejects) `),
                );
              // While its keys were repaired, the corrupted breaker decided alone, and only it.
              for (const at of r.atWarning)
                expect(at).toEqual({
                  target: { shared: false, storeErrors: expect.any(Number) },
                  bystander: { shared: true, storeErrors: 0 },
                });
              corruptLines += r.warnings.length;
            }
            durations.push(Date.now() - started);
            for (const { store } of replicas.splice(0)) await store.close();
          },
        ),
        { seed: 4_004, numRuns: FLEET_RUNS },
      );
      // The runs reached what a caller can see: its own error (the trips), the fleet's rejection, and its own result.
      expect([...outcomes].sort()).toEqual(['error: down', 'ok', 'rejected: open']);
      // And keys of the wrong type were met, repaired and reported.
      expect(corruptLines).toBeGreaterThan(0);
      durations.sort((x, y) => x - y);
      console.log(
        `corrupt state: ${FLEET_RUNS} fleet runs, median ${durations[FLEET_RUNS >> 1]} ms, max ${durations.at(-1)} ms per run; ${corruptLines} corrupt-key lines`,
      );
    }, 60_000);
  });

  it('the replica registry: fleetView() never rejects on junk, lists no member past any TTL, and both replicas are listed after one report (40 runs)', async () => {
    type RegistryJunk =
      | { kind: 'type'; key: 'seen' | 'reports'; type: 'string' | 'list' | 'set' | 'hash' | 'zset' }
      | { kind: 'member'; id: string; score: string; line: string };
    const registryJunk: fc.Arbitrary<RegistryJunk> = fc.oneof(
      fc.record({
        kind: fc.constant('type' as const),
        key: fc.constantFrom('seen' as const, 'reports' as const),
        type: fc.constantFrom(
          'string' as const,
          'list' as const,
          'set' as const,
          'hash' as const,
          'zset' as const,
        ),
      }),
      fc.record({
        kind: fc.constant('member' as const),
        id: fc.constantFrom('ghost', 'a', 'b', ''),
        score: fc.oneof(
          fc.constantFrom('+inf', '-inf', '0', '1e300', '9007199254740993'),
          fc.integer({ min: -1e6, max: 1e13 }).map((n) => String(Date.now() + n)),
        ),
        line: fc.oneof(
          fc.constantFrom(
            '',
            ' ',
            'junk',
            `0 {"s":true,"b":1,"n":{"payments":"open"}}`,
            '1 null',
            '1 []',
          ),
          fc.string({ maxLength: 8 }),
        ),
      }),
    );
    const latestLead = REPLICA_TTL_INTERVALS * MAX_TIMER_MS;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(registryJunk, { maxLength: 6 }), async (junk) => {
        const prefix = `registry${++run}:`;
        const keys = registryKeys(prefix);
        const stores = ['a', 'b'].map(
          (id) =>
            new RedisBreakerStore({
              redis: new Redis(server.port, '127.0.0.1'),
              keyPrefix: prefix,
              instanceId: id,
              reconcileIntervalMs: 600_000,
              operationTimeoutMs: 20_000,
              closeClient: true,
              logger: false,
            }),
        );
        const report = (store: RedisBreakerStore) =>
          (store as unknown as { replicas: { report(): Promise<void> } }).replicas.report();
        try {
          await Promise.all(
            stores.map((store) =>
              store.hydrate([new Breaker('payments', {}, { coordinator: store.coordinator })]),
            ),
          );
          await Promise.all(stores.map(report));
          for (const j of junk) {
            if (j.kind === 'member') {
              await admin.zadd(keys.seen, j.score, j.id).catch(() => undefined);
              await admin.hset(keys.reports, j.id, j.line).catch(() => undefined);
              continue;
            }
            const key = keys[j.key];
            await admin.del(key);
            if (j.type === 'string') await admin.set(key, 'junk');
            else if (j.type === 'list') await admin.rpush(key, 'junk');
            else if (j.type === 'set') await admin.sadd(key, 'junk');
            else if (j.type === 'hash') await admin.hset(key, 'junk', '1');
            else await admin.zadd(key, 1, 'junk');
          }
          const scores = new Map<string, number>();
          const members = await admin
            .zrange(keys.seen, '0', '-1', 'WITHSCORES')
            .catch((): string[] => []);
          for (let i = 0; i + 1 < members.length; i += 2)
            scores.set(members[i]!, Number(members[i + 1]));
          // Junk is never an error for whoever reads the view.
          const view = await stores[0]!.fleetView();
          for (const replica of view.replicas) {
            const score = scores.get(replica.instanceId);
            expect(score !== undefined && score > view.at && score <= view.at + latestLead).toBe(
              true,
            );
            expect(Number.isFinite(replica.ageMs) && replica.ageMs >= 0).toBe(true);
          }
          // One report of each: both listed with what they report, and the registry's keys of their types again.
          await Promise.all(stores.map(report));
          const after = await stores[0]!.fleetView();
          expect(
            after.replicas
              .filter((r) => r.instanceId === 'a' || r.instanceId === 'b')
              .map((r) => [r.instanceId, r.breakers, r.shared, r.notClosed]),
          ).toEqual([
            ['a', 1, true, {}],
            ['b', 1, true, {}],
          ]);
          expect([await admin.type(keys.seen), await admin.type(keys.reports)]).toEqual([
            'zset',
            'hash',
          ]);
          expect(stores.every((store) => store.shared)).toBe(true);
        } finally {
          for (const store of stores) await store.close();
        }
      }),
      { seed: 4_009, numRuns: 40 },
    );
  });

  describe('fleet orders over corrupt force and config records', () => {
    const clock = new ManualClock(T0);
    const OPTIONS: BreakerOptions = { consecutiveFailures: 3, timeoutMs: 5_000 };
    let replicas: {
      store: RedisBreakerStore;
      warnings: string[];
      logs: string[];
      target: Breaker;
      bystander: Breaker;
    }[] = [];

    afterAll(async () => {
      for (const { store } of replicas.splice(0)) await store.close();
    });

    type OrderCorruption =
      | { kind: 'field'; key: 'force' | 'config'; field: string; value: string }
      | { kind: 'wrong-type'; key: 'force' | 'config'; type: 'string' | 'list' | 'set' | 'zset' };
    const orderCorruption: fc.Arbitrary<OrderCorruption> = fc.oneof(
      fc.record({
        kind: fc.constant('field' as const),
        key: fc.constantFrom('force' as const, 'config' as const),
        field: fc.constantFrom('state', 'reason', 'until', 'generation', 'at', 'patch', 'by'),
        value: fc.oneof(
          numberToken,
          plausible,
          fc.constantFrom('open', 'released', '{}', '[]', '{"timeoutMs":-1}'),
        ),
      }),
      fc.record({
        kind: fc.constant('wrong-type' as const),
        key: fc.constantFrom('force' as const, 'config' as const),
        type: fc.constantFrom('string' as const, 'list' as const, 'set' as const, 'zset' as const),
      }),
    );

    async function corrupt(c: OrderCorruption, keys: BreakerKeys): Promise<void> {
      const key = keys[c.key];
      if (c.kind === 'field') {
        if (!['none', 'hash'].includes(await admin.type(key))) await admin.del(key);
        return void (await admin.hset(key, c.field, c.value));
      }
      await admin.del(key);
      if (c.type === 'string') await admin.set(key, 'junk');
      else if (c.type === 'list') await admin.rpush(key, 'junk');
      else if (c.type === 'set') await admin.sadd(key, 'junk');
      else await admin.zadd(key, 1, 'junk');
    }

    async function converge(what: string, done: () => boolean): Promise<void> {
      const deadline = Date.now() + 15_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`The fleet did not converge: ${what}.`);
        await new Promise((resolve) => setTimeout(resolve, 2));
        await Promise.all(replicas.map((r) => r.store.reconcile()));
      }
    }

    it(`reaches every replica, or fails to its caller naming the breaker, and converges once the junk is repaired (${ORDER_RUNS} runs)`, async () => {
      let run = 0;
      let refusedOrders = 0;
      let wrongTypeRuns = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(orderCorruption, { maxLength: 3 }),
          fc.array(orderMessage, { maxLength: 4 }),
          async (corruptions, forged) => {
            const name = `q${++run}`;
            const prefix = `orders${run}:`;
            for (const { store } of replicas.splice(0)) await store.close();
            const keys = breakerKeys(prefix, name);
            for (const c of corruptions) await corrupt(c, keys);
            if (corruptions.some((c) => c.kind === 'wrong-type')) wrongTypeRuns++;
            replicas = ['a', 'b', 'c'].map((id) => {
              const warnings: string[] = [];
              const logs: string[] = [];
              const store = new RedisBreakerStore({
                redis: new Redis(server.port, '127.0.0.1'),
                keyPrefix: prefix,
                instanceId: id,
                operationTimeoutMs: 20_000,
                hydrateTimeoutMs: 20_000,
                closeClient: true,
                logger: { warn: (m) => warnings.push(m), log: keepingAllButQuorum(logs) },
              });
              const target = new Breaker(name, OPTIONS, { coordinator: store.coordinator, clock });
              const bystander = new Breaker(`s${run}`, OPTIONS, {
                coordinator: store.coordinator,
                clock,
              });
              return { store, warnings, logs, target, bystander };
            });
            // Hydration reads the junk: nothing throws, and nobody is forced by what is not a record.
            await Promise.all(replicas.map((r) => r.store.hydrate([r.target, r.bystander])));
            for (const message of forged)
              await admin.publish(
                channelOf(prefix),
                message.replaceAll('"payments"', JSON.stringify(name)),
              );

            const [a] = replicas;
            const order = () =>
              a!.store.fleet.force(a!.target, 'open', { reason: 'drill', by: 'property' });
            const first = await order().then(
              (write) => write,
              (error: unknown) => error,
            );
            if (first instanceof Error) {
              // A key of the wrong type: the caller hears it, naming the breaker; the store repairs the key.
              expect(first).toBeInstanceOf(FleetOrderError);
              expect(first.message).toMatch(
                new RegExp(`^Circuit breaker "${name}" is forced open on this replica only: `),
              );
              refusedOrders++;
              await converge('the keys repaired', () =>
                replicas.every((r) => r.target.snapshot().coordination?.shared === true),
              );
              expect((await order()).breaker).toBe(name);
            }
            await converge('every replica obeys the drill', () =>
              replicas.every((r) => r.target.snapshot().forced?.reason === 'drill'),
            );
            await a!.store.fleet.release(a!.target);
            await converge('every replica released', () =>
              replicas.every((r) => r.target.snapshot().forced === undefined),
            );
            // A caller sees its own result again; and the breaker beside never stopped sharing.
            for (const r of replicas) {
              expect(
                await r.target
                  .execute(() => Promise.resolve('ok'))
                  .catch((e: unknown) => String(e)),
              ).toBe('ok');
              expect(r.store.shared).toBe(true);
              expect(r.bystander.snapshot().coordination).toEqual({ shared: true, storeErrors: 0 });
              expect(r.logs).toEqual([]);
              for (const warning of r.warnings)
                expect(warning).toMatch(
                  new RegExp(
                    `^Circuit breaker "${name}": (Redis (held|rejects) |this replica cannot apply the fleet's reconfiguration)`,
                  ),
                );
            }
            expect(['hash', 'none']).toContain(await admin.type(keys.force));
            expect(['hash', 'none']).toContain(await admin.type(keys.config));
            for (const { store } of replicas.splice(0)) await store.close();
          },
        ),
        { seed: 4_008, numRuns: ORDER_RUNS },
      );
      // Keys of the wrong type were met. Whether an order meets one before the replicas' reads repair it is a
      // race (it was refused to its caller in some runs, in none in others): each run checks both outcomes,
      // so what must hold here is that the seed reaches them, and that no order was refused without one.
      expect(wrongTypeRuns).toBeGreaterThan(0);
      expect(refusedOrders).toBeLessThanOrEqual(wrongTypeRuns);
    }, 60_000);
  });
});
