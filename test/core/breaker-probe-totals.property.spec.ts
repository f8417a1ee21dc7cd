import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  type BreakerSnapshot,
  type CallPermit,
} from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

/**
 * Probe totals add up whatever interrupts a half-open round: admitted =
 * succeeded + failed + released + abandoned + the current round's in flight.
 * Random acquisitions, settlements (late ones included), clock steps, and the
 * interruptions: force (each state), release, reset, reconfigure, another
 * replica's word.
 */
type Step =
  | { kind: 'acquire' }
  | { kind: 'settle'; index: number; outcome: 'success' | 'failure' | 'ignored' | 'timeout' }
  | { kind: 'advance'; ms: number }
  | { kind: 'force'; state: 'open' | 'closed' | 'disabled' }
  | { kind: 'release' | 'reset' | 'adoptOpen' | 'adoptClosed' }
  | { kind: 'reconfigure'; maxProbes: number; successesToClose: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'acquire' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      index: fc.nat(9),
      outcome: fc.constantFrom(
        'success' as const,
        'failure' as const,
        'ignored' as const,
        'timeout' as const,
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 1, max: 1_500 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('force' as const),
      state: fc.constantFrom('open' as const, 'closed' as const, 'disabled' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom(
        'release' as const,
        'reset' as const,
        'adoptOpen' as const,
        'adoptClosed' as const,
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ maxProbes: fc.integer({ min: 1, max: 4 }), extra: fc.nat(2) })
      .map(({ maxProbes, extra }) => ({
        kind: 'reconfigure' as const,
        maxProbes: maxProbes + extra,
        successesToClose: maxProbes,
      })),
  },
);

function probesAddUp(snapshot: BreakerSnapshot): void {
  const { admitted, succeeded, failed, released, abandoned } = snapshot.totals.probes;
  const inFlight = snapshot.halfOpen?.probesInFlight ?? 0;
  expect({
    admitted,
    accounted: succeeded + failed + released + (abandoned ?? 0) + inFlight,
  }).toEqual({
    admitted,
    accounted: admitted,
  });
}

describe('probe totals (property)', () => {
  it('a probe in flight when force() ends its round is abandoned, and later counts as a call only', async () => {
    const clock = new ManualClock(1_000_000);
    const breaker = new Breaker(
      'payments',
      { timeoutMs: false, consecutiveFailures: 1, openDurationMs: 1_000 },
      { clock },
    );
    const results: string[] = [];
    breaker.on('probe', ({ result }) => results.push(result));
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    clock.advance(1_000);
    const probe = breaker.acquire();
    breaker.force('closed', { reason: 'interrupt' });
    probe.succeed('late');
    const { totals, halfOpen } = breaker.snapshot();
    expect([totals.probes, totals.successes, halfOpen, results]).toEqual([
      { admitted: 1, succeeded: 0, failed: 0, released: 0, abandoned: 1 },
      1,
      undefined,
      ['admitted', 'abandoned'],
    ]);
  });

  it('add up after every step, whatever interrupts a half-open round', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 20, maxLength: 120 }), (steps) => {
        const clock = new ManualClock(1_000_000);
        const breaker = new Breaker(
          'payments',
          {
            timeoutMs: false,
            consecutiveFailures: 1,
            openDurationMs: 1_000,
            halfOpen: { maxProbes: 3, maxConcurrent: 3, successesToClose: 2, maxWaitMs: 2_000 },
          },
          { clock },
        );
        const permits: CallPermit[] = [];
        let abandonedEvents = 0;
        breaker.on('probe', ({ result }) => {
          if (result === 'abandoned') abandonedEvents++;
        });
        for (const s of steps) {
          switch (s.kind) {
            case 'acquire':
              try {
                permits.push(breaker.acquire());
              } catch {
                // Rejected: nothing admitted.
              }
              break;
            case 'settle': {
              const permit = permits[s.index];
              if (permit === undefined) break;
              if (s.outcome === 'success') permit.succeed('ok');
              else if (s.outcome === 'failure') permit.fail(new Error('down'));
              else if (s.outcome === 'ignored') permit.release();
              else permit.timeOut(new CallTimeoutError('payments', 100));
              permits.splice(s.index, 1);
              break;
            }
            case 'advance':
              clock.advance(s.ms);
              break;
            case 'force':
              breaker.force(s.state, { reason: 'property' });
              break;
            case 'release':
              breaker.release();
              break;
            case 'reset':
              breaker.reset();
              break;
            case 'adoptOpen':
              breaker.adoptOpen(clock.now() + 1_000);
              break;
            case 'adoptClosed':
              breaker.adoptClosed();
              break;
            case 'reconfigure':
              breaker.reconfigure({
                timeoutMs: false,
                consecutiveFailures: 1,
                openDurationMs: 1_000,
                halfOpen: {
                  maxProbes: s.maxProbes,
                  maxConcurrent: s.maxProbes,
                  successesToClose: s.successesToClose,
                  maxWaitMs: 2_000,
                },
              });
              break;
          }
          const snapshot = breaker.snapshot();
          probesAddUp(snapshot);
          expect(snapshot.totals.probes.abandoned).toBe(abandonedEvents);
        }
      }),
      { seed: 25_0011, numRuns: 500 },
    );
  });
});
