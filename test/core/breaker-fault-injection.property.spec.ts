import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Breaker, type BreakerSnapshot } from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';

const START = 1_767_225_600_000;
const SEED = 14_2026;

type Step = { kind: 'ok' } | { kind: 'fail' } | { kind: 'advance'; ms: number } | { kind: 'fault' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ kind: 'ok' }),
  fc.constant<Step>({ kind: 'fail' }),
  fc.integer({ min: 1, max: 3_000 }).map<Step>((ms) => ({ kind: 'advance', ms })),
  fc.constant<Step>({ kind: 'fault' }),
);

/** What two breakers must agree on, names aside. */
function comparable(snapshot: BreakerSnapshot) {
  const { name: _name, ...rest } = snapshot;
  return rest;
}

async function run(breaker: Breaker, outcome: 'ok' | 'fail'): Promise<string> {
  return breaker
    .execute(() => (outcome === 'ok' ? 'ok' : Promise.reject(new Error('down'))))
    .then(
      (value) => value,
      (error: Error) => error.name,
    );
}

describe('fault injection, properties (fast-check, fixed seed)', () => {
  it('removing a fault leaves no trace: a breaker that had faults injected and removed behaves as its untouched twin', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const options = {
          consecutiveFailures: 3,
          openDurationMs: 2_000,
          timeoutMs: false as const,
        };
        const clockA = new ManualClock(START);
        const clockB = new ManualClock(START);
        const touched = new Breaker('a', options, { clock: clockA, faultInjection: true });
        const twin = new Breaker('b', options, { clock: clockB });
        for (const s of steps) {
          if (s.kind === 'advance') {
            clockA.advance(s.ms);
            clockB.advance(s.ms);
          } else if (s.kind === 'fault') {
            // Injected and removed with no call in between, at any state: nothing may stay behind.
            touched.injectFault({ fail: true, latencyMs: 5, rate: 0.5 }).remove();
          } else {
            expect(await run(touched, s.kind)).toBe(await run(twin, s.kind));
          }
          expect(comparable(touched.snapshot())).toEqual(comparable(twin.snapshot()));
        }
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it('a rate is exact within one call: after n admitted calls, |injected - n * rate| < 1, the first call included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 300 }),
        async (rate, n) => {
          // Metrics-only: every call is recorded, and none can trip the breaker.
          const breaker = new Breaker('rated', { timeoutMs: false }, { faultInjection: true });
          breaker.force('metrics-only', { reason: 'record, never trip' });
          const fault = breaker.injectFault({ fail: true, rate });
          let reached = 0;
          for (let i = 0; i < n; i++)
            await breaker
              .execute(() => {
                reached++;
              })
              .catch(() => undefined);
          expect(fault.injected + reached).toBe(n);
          expect(Math.abs(fault.injected - n * rate)).toBeLessThan(1);
          expect(fault.injected).toBeGreaterThanOrEqual(1);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });
});
