import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Breaker,
  BREAKER_EVENT_NAMES,
  isCallRejected,
  type BreakerOptions,
  type CallPermit,
} from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

/**
 * Twin breakers run the same random sequence of calls, settlements, clock
 * steps and control; one of them is also peeked at (many times) before
 * every step. peek() must change nothing anyone can see: after every step
 * the twins have made the same transitions and emitted the same events, and
 * at the end their snapshots are equal. Before every admission, the peeked
 * answer must be what the admission then does.
 */
type Step =
  | { kind: 'acquire'; key: number }
  | { kind: 'settle'; index: number; outcome: 'success' | 'failure' | 'ignored' }
  | { kind: 'advance'; ms: number }
  | { kind: 'isolate' | 'reset' | 'release'; key: number | undefined }
  | {
      kind: 'force';
      state: 'open' | 'closed' | 'disabled';
      forMs: number | undefined;
      /** A child's own (of a per-key family), or the breaker's (the family's: every child's). */
      key: number | undefined;
    };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('acquire' as const), key: fc.nat(2) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      index: fc.nat(7),
      outcome: fc.constantFrom('success' as const, 'failure' as const, 'ignored' as const),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 400, max: 2_000 }),
        fc.integer({ min: 2_000, max: 6_000 }),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom('isolate', 'reset', 'release'),
      key: fc.option(fc.nat(2), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('force' as const),
      state: fc.constantFrom('open' as const, 'closed' as const, 'disabled' as const),
      forMs: fc.option(fc.integer({ min: 100, max: 3_000 }), { nil: undefined }),
      key: fc.option(fc.nat(2), { nil: undefined }),
    }),
  },
);

const options = fc
  .record({
    consecutiveFailures: fc.integer({ min: 1, max: 3 }),
    openDurationMs: fc.constantFrom(500, 1_000, 2_000),
    backoff: fc.constantFrom(undefined, { multiplier: 2, maxMs: 8_000 }),
    halfOpen: fc
      .record({
        maxProbes: fc.integer({ min: 1, max: 3 }),
        maxWaitMs: fc.constantFrom(1_500, 4_000),
      })
      .chain(({ maxProbes, maxWaitMs }) =>
        fc.record({
          maxProbes: fc.constant(maxProbes),
          maxConcurrent: fc.integer({ min: 1, max: maxProbes }),
          successesToClose: fc.integer({ min: 1, max: maxProbes }),
          maxWaitMs: fc.constant(maxWaitMs),
        }),
      ),
    // A family that opens when one child of two is open: its gate (open, half-open probes through any key) is peeked too.
    family: fc.constantFrom(
      {},
      { perKey: { maxKeys: 2 } },
      { perKey: { maxKeys: 3 }, aggregate: { openWhenOpenRatio: 0.5, minKeys: 2 } },
    ),
  })
  .map(({ family, ...rest }): BreakerOptions => ({ ...rest, ...family }));

interface Twin {
  breaker: Breaker;
  events: string[];
  permits: CallPermit[];
}

function makeTwin(given: BreakerOptions, clock: ManualClock): Twin {
  const breaker = new Breaker(
    'twin',
    // Throttling sheds at random and jitter draws at random: neither is what peek() can promise.
    { timeoutMs: false, overload: false, jitter: 0, ...given },
    { clock },
  );
  const events: string[] = [];
  const record = (target: Breaker) => {
    for (const name of BREAKER_EVENT_NAMES)
      target.on(name, (event) => events.push(`${target.name} ${name} ${JSON.stringify(event)}`));
  };
  record(breaker);
  breaker.onChild(record);
  return { breaker, events, permits: [] };
}

/** The breaker a call for `key` goes to. */
const target = (breaker: Breaker, key: number): Breaker =>
  breaker.config.perKey === undefined ? breaker : breaker.forKey(`k${key}`);

function run(twin: Twin, s: Step, clock: ManualClock, peeked: boolean): void {
  const { breaker, permits } = twin;
  switch (s.kind) {
    case 'acquire': {
      const callee = target(breaker, s.key);
      const answer = peeked ? callee.peek() : undefined;
      // A call through a child can be its half-open family's probe: the family says so with its probe event.
      const familyProbes = () =>
        twin.events.filter((e) => e === `twin probe {"result":"admitted"}`).length;
      const before = familyProbes();
      let permit: CallPermit | undefined;
      let rejection: unknown;
      try {
        permit = callee.acquire();
      } catch (error) {
        rejection = error;
      }
      if (answer !== undefined) {
        if (answer.permitted) {
          expect(permit, 'peek() said permitted, the call was rejected').toBeDefined();
          const familyProbe = callee !== breaker && familyProbes() > before;
          expect(answer.probe, 'peek() foretold the probe wrong').toBe(
            permit!.probe || familyProbe,
          );
        } else {
          expect(isCallRejected(rejection), 'peek() said rejected, the call went in').toBe(true);
          expect(rejection).toMatchObject({
            reason: answer.reason,
            retryAfterMs: answer.retryAfterMs,
            breakerName: answer.breakerName,
          });
        }
      }
      if (permit !== undefined) permits.push(permit);
      return;
    }
    case 'settle': {
      const permit = permits.splice(s.index % Math.max(1, permits.length), 1)[0];
      if (permit === undefined) return;
      if (s.outcome === 'success') permit.succeed(undefined);
      else if (s.outcome === 'failure') permit.fail(new Error('down'));
      else permit.release();
      return;
    }
    case 'advance':
      // One clock for both twins: advanced once, by the twin that is not peeked.
      if (!peeked) clock.advance(s.ms);
      return;
    case 'force':
      (s.key === undefined ? breaker : target(breaker, s.key)).force(s.state, {
        reason: 'property',
        ...(s.forMs === undefined ? {} : { untilMs: clock.now() + s.forMs }),
      });
      return;
    default:
      (s.key === undefined ? breaker : target(breaker, s.key))[s.kind]();
  }
}

/** The breakers of a twin: the family (or the plain breaker) and its children. */
const members = (twin: Twin): Breaker[] => [twin.breaker, ...twin.breaker.children()];

/** Their states as last decided: read without making a due transition. */
const decided = (twin: Twin): string[] =>
  members(twin).map((b) => `${b.name}=${b.lastDecidedState}`);

function peekAll(twin: Twin): void {
  for (const b of members(twin)) {
    b.peek();
    b.isCallPermitted();
  }
}

describe('Breaker.peek() (property)', () => {
  it('never changes what the breaker does, shows or emits, and foretells every admission', () => {
    fc.assert(
      fc.property(options, fc.array(step, { minLength: 20, maxLength: 80 }), (given, steps) => {
        const clock = new ManualClock();
        const peeked = makeTwin(given, clock);
        const plain = makeTwin(given, clock);
        for (const s of steps) {
          for (let i = 0; i < 3; i++) peekAll(peeked);
          run(plain, s, clock, false);
          run(peeked, s, clock, true);
          expect(peeked.events).toEqual(plain.events);
          expect(decided(peeked)).toEqual(decided(plain));
        }
        const snapshots = (t: Twin) => members(t).map((b) => b.snapshot());
        expect(snapshots(peeked)).toEqual(snapshots(plain));
      }),
      { seed: 15_0015, numRuns: 1_000 },
    );
  });
});
