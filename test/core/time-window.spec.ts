import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimeWindow } from '../../lib/core/window/time-window.js';
import {
  SLOT_FAILURE,
  SLOT_OVERLOAD,
  SLOT_SHED,
  SLOT_SLOW,
  SLOT_SUCCESS,
} from '../../lib/core/window/outcome-window.interface.js';
import { WINDOW_SLOTS } from '../helpers/window-slots.js';

const SLOTS = WINDOW_SLOTS;

type Step = { kind: 'record'; slot: number; advance: number } | { kind: 'reset' };

const counted = (s: number) => (s & (SLOT_SUCCESS | SLOT_FAILURE)) !== 0;

/** What the window must hold at `now`: the outcomes recorded in its last `buckets` buckets. */
function expected(events: { slot: number; bucket: number }[], bucket: number, buckets: number) {
  const live = events.filter((e) => e.bucket > bucket - buckets);
  return {
    calls: live.filter((e) => counted(e.slot)).length,
    failures: live.filter((e) => e.slot & SLOT_FAILURE).length,
    slowCalls: live.filter((e) => e.slot & SLOT_SLOW).length,
    overloads: live.filter((e) => e.slot === SLOT_OVERLOAD).length,
    shed: live.filter((e) => e.slot === SLOT_SHED).length,
  };
}

const read = (w: TimeWindow) => ({
  calls: w.calls,
  failures: w.failures,
  slowCalls: w.slowCalls,
  overloads: w.overloads,
  shed: w.shed,
});

describe('TimeWindow', () => {
  it('counts exactly the outcomes of its last buckets, rare ones included, for any timing (against a plain list)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(100, 250, 1_000),
        // Any start: an injected clock's readings need not begin near 0.
        fc.oneof(fc.constant(0), fc.integer({ min: -1_000_000, max: 2_000_000_000_000 })),
        fc.array(
          fc.oneof(
            {
              weight: 30,
              arbitrary: fc.record({
                kind: fc.constant('record' as const),
                slot: fc.constantFrom(...SLOTS),
                advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 })),
              }),
            },
            { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const) }) },
          ),
          { maxLength: 150 },
        ),
        (buckets, bucketMs, start, steps: Step[]) => {
          const window = new TimeWindow(buckets * bucketMs, buckets, start);
          let now = start;
          let events: { slot: number; bucket: number }[] = [];
          for (const step of steps) {
            if (step.kind === 'reset') {
              window.reset();
              events = [];
              continue;
            }
            now += step.advance;
            window.record(step.slot, now);
            events.push({ slot: step.slot, bucket: Math.floor(now / bucketMs) });
            expect(read(window)).toEqual(expected(events, Math.floor(now / bucketMs), buckets));
          }
          // Reads after idle time rotate too.
          now += bucketMs;
          window.refresh(now);
          expect(read(window)).toEqual(expected(events, Math.floor(now / bucketMs), buckets));
        },
      ),
      { seed: 20261202, numRuns: 1_500 },
    );
  });

  it('empties after a gap of the whole duration, however much it held', () => {
    const window = new TimeWindow(10_000, 10, 0);
    for (let i = 0; i < 50; i++)
      window.record(i % 2 ? SLOT_FAILURE | SLOT_SLOW : SLOT_OVERLOAD, i * 100);
    expect(read(window)).toEqual({
      calls: 25,
      failures: 25,
      slowCalls: 25,
      overloads: 25,
      shed: 0,
    });
    window.refresh(4_900 + 10_000);
    expect(read(window)).toEqual({ calls: 0, failures: 0, slowCalls: 0, overloads: 0, shed: 0 });
  });
});
