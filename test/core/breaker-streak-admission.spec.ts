import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { flush } from '../helpers/flush.js';
import { ManualClock } from '../helpers/manual-clock.js';

/**
 * Which calls make a failure streak: calls still in flight when a dependency
 * goes down come back successful after its first failures, and say nothing of
 * it since. A call admitted before the streak's first failing call neither
 * ends the streak (a success) nor extends it (a failure); a success of one
 * admitted from it on always ends it.
 */

/** A call started now whose outcome the test decides later. */
function inFlight(breaker: Breaker) {
  const d = deferred<number>();
  const done = breaker
    .execute(() => d.promise)
    .then(
      () => 'ok',
      () => 'failed',
    );
  return {
    succeed: async () => {
      d.resolve(1);
      await done;
    },
    fail: async () => {
      d.reject(new Error('down'));
      await done;
    },
  };
}

async function succeedNow(breaker: Breaker, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) await inFlight(breaker).succeed();
}

async function failNow(breaker: Breaker, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) await inFlight(breaker).fail();
}

// The default rules and a time window: successes settle on the general path, not the breaker's fast one.
const general: BreakerOptions = { window: { type: 'time', durationMs: 60_000 } };

describe.each([
  ['the fast path (count window)', undefined],
  ['the general path (time window)', general],
])('A failure streak and the calls in flight when it began, on %s', (_, options) => {
  const make = (name: string) => new Breaker(name, options, { clock: new ManualClock() });

  it('successes of calls admitted before its first failing call do not end it: 6 failures open', async () => {
    const breaker = make('outage');
    await succeedNow(breaker, 20);
    const stale = [inFlight(breaker), inFlight(breaker), inFlight(breaker)];
    for (const call of stale) {
      await failNow(breaker);
      await call.succeed();
    }
    await failNow(breaker, 2);
    expect(breaker.state).toBe('closed');
    await failNow(breaker);
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({
      reason: 'consecutive-failures',
      consecutiveFailures: 6,
    });
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 29, successes: 23 });
  });

  it('a success of a call admitted after its first failing call ends it', async () => {
    const breaker = make('fresh');
    // Enough successes that the 5 failures before the fresh one keep the window healthy (at most 10%).
    await succeedNow(breaker, 60);
    await failNow(breaker);
    const fresh = inFlight(breaker);
    await failNow(breaker, 4);
    await fresh.succeed();
    await failNow(breaker, 5);
    expect(breaker.state).toBe('closed');
    await failNow(breaker);
    expect(breaker.state).toBe('open');
  });

  it('failures of calls admitted before its first failing call do not extend it', async () => {
    const breaker = make('late-failures');
    await succeedNow(breaker, 20);
    const stale = [inFlight(breaker), inFlight(breaker)];
    await failNow(breaker, 5);
    for (const call of stale) await call.fail();
    expect(breaker.state).toBe('closed');
    await failNow(breaker);
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().lastTransition).toMatchObject({
      reason: 'consecutive-failures',
      consecutiveFailures: 6,
    });
  });
});

describe('consecutiveFailures given alone', () => {
  it('opens on its count of failures however concurrent calls end: three in flight failing in reverse order', async () => {
    const breaker = new Breaker(
      'classic',
      { consecutiveFailures: 3 },
      { clock: new ManualClock() },
    );
    const calls = [inFlight(breaker), inFlight(breaker), inFlight(breaker)];
    await calls[2]!.fail();
    await calls[1]!.fail();
    expect(breaker.state).toBe('closed');
    await calls[0]!.fail();
    expect(breaker.state).toBe('open');
  });
});

describe('Call numbering across generations and withdrawals', () => {
  it('a call admitted before reset() counts for nothing after it, whatever it brings', async () => {
    const breaker = new Breaker('generations', { consecutiveFailures: 2 });
    const before = inFlight(breaker);
    await failNow(breaker);
    breaker.reset();
    await before.fail();
    expect(breaker.snapshot().window).toMatchObject({ calls: 0, failures: 0 });
    await failNow(breaker);
    expect(breaker.state).toBe('closed');
    await failNow(breaker);
    expect(breaker.state).toBe('open');
  });
});

// A settlement takes the newest or the oldest call in flight: outcomes that come back out of order.
type Step = { kind: 'admit' } | { kind: 'settle'; newest: boolean; ok: boolean };

const steps = fc.array(
  fc.oneof(
    { weight: 2, arbitrary: fc.constant<Step>({ kind: 'admit' }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('settle' as const),
        newest: fc.boolean(),
        // Failures more often than not: streaks long enough to open.
        ok: fc.constantFrom(false, false, true),
      }),
    },
  ),
  { minLength: 20, maxLength: 60 },
);

describe('A failure streak (property)', () => {
  it('beside the rate rule, a call admitted before the streak began neither ends nor extends it; alone, every call counts', async () => {
    await fc.assert(
      fc.asyncProperty(steps, fc.boolean(), fc.boolean(), async (plan, generalPath, withRate) => {
        // It opens at exactly 4 in the model's count. Beside it, a rate rule that never judges (more calls
        // than a plan makes): only the streak's counting changes. Slow-call detection (never slow: the
        // clock stands still) sends successes down the general path.
        const breaker = new Breaker(
          'property',
          {
            consecutiveFailures: 4,
            ...(withRate
              ? {
                  failureRateThreshold: 0.5,
                  minimumThroughput: 100,
                  window: { type: 'count', size: 100 },
                }
              : {}),
            ...(generalPath ? { slowCallDurationMs: 1_000 } : {}),
          },
          { clock: new ManualClock() },
        );
        const open: { order: number; call: ReturnType<typeof inFlight> }[] = [];
        let admitted = 0;
        let streak = 0;
        let streakStart = 0; // the admission number of the streak's first failing call
        for (const step of plan) {
          if (breaker.state !== 'closed') break;
          if (step.kind === 'admit') {
            open.push({ order: admitted++, call: inFlight(breaker) });
            continue;
          }
          if (open.length === 0) continue;
          const [{ order, call }] = open.splice(step.newest ? -1 : 0, 1);
          const current = order >= streakStart || !withRate;
          if (step.ok) {
            await call.succeed();
            if (current) streak = 0;
          } else {
            await call.fail();
            if (streak === 0) {
              streakStart = order;
              streak = 1;
            } else if (current) streak++;
          }
          expect(breaker.state).toBe(streak >= 4 ? 'open' : 'closed');
        }
        for (const { call } of open) await call.succeed();
        await flush();
      }),
      {
        numRuns: 500,
        examples: [
          [
            [
              { kind: 'admit' },
              { kind: 'admit' },
              { kind: 'settle', newest: true, ok: false },
              { kind: 'settle', newest: false, ok: true },
              { kind: 'admit' },
              { kind: 'settle', newest: true, ok: false },
              { kind: 'admit' },
              { kind: 'settle', newest: true, ok: false },
              { kind: 'admit' },
              { kind: 'settle', newest: true, ok: false },
            ],
            false,
            true,
          ],
        ],
      },
    );
  });
});
