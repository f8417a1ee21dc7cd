import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { BREAKER_STATES, FAMILY_OVERFLOW_KEY, type Breaker } from '../lib/core/index.js';
import { CircuitBreakerMetricsService } from '../lib/prometheus/index.js';
import { ManualClock } from './helpers/manual-clock.js';
import { standaloneRegistry } from './helpers/standalone-registry.js';

/**
 * Random sequences of keys (plain, near the length bound, very long, unicode
 * with split surrogate pairs, beginning with the mark, "*overflow*", and
 * spellings of keys the family made up), failures that open children,
 * successes and resets that close them, and clock moves, against a per-key
 * family with Prometheus key labels. After every step: the family holds at
 * most maxKeys children; a new key overflows only when no held child could be
 * evicted; two distinct keys never share a child unless both overflowed;
 * every stored key is within maxKeyLength; and the keyed series are those of
 * the children held (plus the family's and the overflow child's).
 */
const SEED = 20_261_201;
const RUNS = 1_000;

type Command =
  | { type: 'use' | 'fail' | 'succeed' | 'reset'; key: string }
  | { type: 'spell'; pick: number }
  | { type: 'advance'; ms: number };

const longKey = fc
  .record({
    unit: fc.constantFrom('x', 'é', '😀'),
    length: fc.integer({ min: 60, max: 3_000 }),
    tail: fc.constantFrom('', 'a', 'b', '\uD800', '\uD801'),
  })
  .map(({ unit, length, tail }) => unit.repeat(length) + tail);
const nearBound = fc.integer({ min: 62, max: 102 }).map((length) => 'k'.repeat(length));
const keyArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', '') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '*overflow*',
      FAMILY_OVERFLOW_KEY,
      '…',
      '…a',
      '\uD83D',
      'host\u0000',
    ),
  },
  { weight: 2, arbitrary: longKey },
  { weight: 1, arbitrary: nearBound },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
);
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ type: fc.constant('use' as const), key: keyArb }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('fail' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('succeed' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('reset' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('spell' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('advance' as const),
      ms: fc.integer({ min: 0, max: 2_500 }),
    }),
  },
);
const configArb = fc.record({
  maxKeys: fc.integer({ min: 1, max: 6 }),
  maxKeyLength: fc.constantFrom(64, 100),
  idleMs: fc.option(fc.integer({ min: 500, max: 3_000 }), { nil: undefined }),
});

// The state as the family last heard it: looking must not make a due transition happen.
const isEvictable = (child: Breaker) =>
  child.lastDecidedState === 'closed' || child.lastDecidedState === 'disabled';

async function run(
  config: { maxKeys: number; maxKeyLength: number; idleMs: number | undefined },
  commands: Command[],
): Promise<void> {
  const clock = new ManualClock();
  const perKey = {
    maxKeys: config.maxKeys,
    maxKeyLength: config.maxKeyLength,
    ...(config.idleMs === undefined ? {} : { idleMs: config.idleMs }),
  };
  const { registry, orchestrator } = standaloneRegistry({
    clock,
    logging: false,
    breakers: { hosts: { perKey, consecutiveFailures: 1, openDurationMs: 1_000 } },
  });
  const metrics = new Registry();
  const service = new CircuitBreakerMetricsService(registry, { registry: metrics, keyLabel: true });
  service.onModuleInit();
  const family = registry.get('hosts');
  /** The caller's key each non-overflow child was handed out for. */
  const owners = new Map<Breaker, string>();

  const forKey = (key: string, where: string): Breaker => {
    const held = [...family.children()].filter((child) => child.key !== FAMILY_OVERFLOW_KEY);
    const before = new Set(held);
    const child = family.forKey(key);
    if (child.key === FAMILY_OVERFLOW_KEY) {
      // Only a full family whose every held child is failing may send a key to the overflow child.
      expect(held.length, where).toBe(config.maxKeys);
      expect(
        held.filter(isEvictable).map((c) => c.key),
        where,
      ).toEqual([]);
      return child;
    }
    const owner = owners.get(child);
    if (owner === undefined) {
      expect(before.has(child), where).toBe(false);
      owners.set(child, key);
    } else {
      expect(owner, where).toBe(key);
    }
    if (key.length <= config.maxKeyLength && !key.startsWith('…'))
      expect(child.key, where).toBe(key);
    else expect(child.key, where).toMatch(/^….*…[0-9a-f]{32}$/su);
    return child;
  };

  for (const [step, command] of commands.entries()) {
    const where = `step ${step}: ${JSON.stringify(command).slice(0, 120)}`;
    switch (command.type) {
      case 'use':
        forKey(command.key, where);
        break;
      case 'fail':
        await forKey(command.key, where)
          .execute(() => Promise.reject(new Error('down')))
          .catch(() => undefined);
        break;
      case 'succeed':
        await forKey(command.key, where)
          .execute(() => 'ok')
          .catch(() => undefined);
        break;
      case 'reset':
        forKey(command.key, where).reset();
        break;
      case 'spell': {
        // A caller who spells out a key the family made up (a bounded form, the overflow child's key).
        const made = [...family.children()]
          .map((child) => child.key!)
          .filter((key) => key.startsWith('…'));
        if (made.length > 0) forKey(made[command.pick % made.length]!, where);
        break;
      }
      case 'advance':
        clock.advance(command.ms);
        break;
    }

    const children = [...family.children()];
    const held = children.filter((child) => child.key !== FAMILY_OVERFLOW_KEY);
    expect(held.length, where).toBeLessThanOrEqual(config.maxKeys);
    expect(children.length - held.length, where).toBeLessThanOrEqual(1);
    expect(new Set(children.map((child) => child.key)).size, where).toBe(children.length);
    for (const child of children)
      expect(child.key!.length, where).toBeLessThanOrEqual(config.maxKeyLength);

    const keyed = new Set<string>();
    let series = 0;
    const byState = new Map<string, number>();
    let unkeyed = 0;
    for (const metric of await metrics.getMetricsAsJSON()) {
      for (const value of metric.values) {
        if (metric.name === 'circuit_breaker_keys')
          byState.set(String(value.labels.state), value.value);
        const key = value.labels.key;
        if (typeof key !== 'string' || key === '') {
          if (metric.name.startsWith('circuit_breaker_keys') || metric.name.includes('config'))
            unkeyed++;
          continue;
        }
        keyed.add(key);
        series++;
      }
    }
    // The family's targets by state, without a key label: one series per state, summing to the children held.
    const states = new Map<string, number>();
    for (const child of children) states.set(child.state, (states.get(child.state) ?? 0) + 1);
    for (const [state, count] of byState) expect(count, where).toBe(states.get(state) ?? 0);
    expect(unkeyed, where).toBe(BREAKER_STATES.length + 1 + 1);
    const heldKeys = new Set(children.map((child) => child.key!));
    expect(
      [...keyed].filter((key) => !heldKeys.has(key)),
      where,
    ).toEqual([]);
    expect(keyed.size, where).toBeLessThanOrEqual(config.maxKeys + 1);
    // Per child at most: 5 states, 2 window gauges, 11 call label sets, 25 transitions, 4 probe results, a histogram's lines.
    expect(series, where).toBeLessThanOrEqual((config.maxKeys + 1) * (5 + 2 + 11 + 25 + 4 + 17));
  }
  service.onModuleDestroy();
  await orchestrator.onApplicationShutdown();
}

describe('per-key family, property-based', () => {
  it(`keeps its bounds for random keys, failures, recoveries and clock moves (seed ${SEED}, ${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        configArb,
        fc.array(commandArb, { minLength: 1, maxLength: 40 }),
        (config, commands) => run(config, commands),
      ),
      { seed: SEED, numRuns: RUNS },
    );
  }, 120_000);
});
