import { describe, expect, it } from 'vitest';
import { resolveBreakerOptions } from '../../lib/core/options/resolve-options.js';
import fc from 'fast-check';
import { suddenStreak, tripReason, unreachableStreak } from '../../lib/core/state/trip-rules.js';
import { CountWindow } from '../../lib/core/window/count-window.js';
import { TimeWindow } from '../../lib/core/window/time-window.js';
import {
  SLOT_FAILURE,
  SLOT_SLOW,
  SLOT_SUCCESS,
} from '../../lib/core/window/outcome-window.interface.js';

function countWindow(slots: number[]): CountWindow {
  const window = new CountWindow(100);
  for (const slot of slots) window.record(slot, 0);
  return window;
}

const clock = { monotonic: () => 0 };

/** `before` calls, the first `failedBefore` of them failed, then a streak of `streak` failures. */
function streakAfter(before: number, failedBefore: number, streak: number): CountWindow {
  return countWindow([
    ...Array<number>(failedBefore).fill(SLOT_FAILURE),
    ...Array<number>(before - failedBefore).fill(SLOT_SUCCESS),
    ...Array<number>(streak).fill(SLOT_FAILURE),
  ]);
}

describe('tripReason (when a closed breaker must open)', () => {
  it('opens on the failure streak before any population is reached', () => {
    const config = resolveBreakerOptions('streak', {
      consecutiveFailures: 3,
      minimumThroughput: 50,
    });
    expect(tripReason(config, countWindow([SLOT_FAILURE, SLOT_FAILURE]), 2, clock)).toBeUndefined();
    expect(
      tripReason(config, countWindow([SLOT_FAILURE, SLOT_FAILURE, SLOT_FAILURE]), 3, clock),
    ).toBe('consecutive-failures');
  });

  it('judges the failure rate only from minimumThroughput calls on, and at exactly the threshold', () => {
    const config = resolveBreakerOptions('rate', {
      failureRateThreshold: 0.55,
      minimumThroughput: 100,
    });
    const slots = [
      ...Array<number>(55).fill(SLOT_FAILURE),
      ...Array<number>(44).fill(SLOT_SUCCESS),
    ];
    expect(tripReason(config, countWindow(slots), 0, clock)).toBeUndefined();
    // 55 / 100 >= 0.55 must hold (55 >= 0.55 * 100 would not, in floating point).
    expect(tripReason(config, countWindow([...slots, SLOT_SUCCESS]), 0, clock)).toBe(
      'failure-rate',
    );
  });

  it('opens on the slow-call rate when it is configured, even without failures', () => {
    const config = resolveBreakerOptions('slow', {
      slowCallDurationMs: 100,
      slowCallRateThreshold: 0.5,
      minimumThroughput: 4,
    });
    expect(
      tripReason(
        config,
        countWindow([
          SLOT_SUCCESS | SLOT_SLOW,
          SLOT_SUCCESS,
          SLOT_SUCCESS | SLOT_SLOW,
          SLOT_SUCCESS,
        ]),
        0,
        clock,
      ),
    ).toBe('slow-call-rate');
    expect(
      tripReason(
        config,
        countWindow([SLOT_SUCCESS | SLOT_SLOW, SLOT_SUCCESS, SLOT_SUCCESS, SLOT_SUCCESS]),
        0,
        clock,
      ),
    ).toBeUndefined();
  });

  it('ages a time window by the clock before judging it', () => {
    const config = resolveBreakerOptions('timed', {
      window: { type: 'time', durationMs: 10_000, buckets: 10 },
      minimumThroughput: 2,
      failureRateThreshold: 0.5,
    });
    const window = new TimeWindow(10_000, 10, 0);
    window.record(SLOT_FAILURE, 0);
    window.record(SLOT_FAILURE, 0);
    expect(tripReason(config, window, 0, { monotonic: () => 5_000 })).toBe('failure-rate');
    expect(tripReason(config, window, 0, { monotonic: () => 30_000 })).toBeUndefined();
    expect(window.calls).toBe(0);
  });

  it('a sudden streak: 6 failures in a row open a default breaker whose window was healthy before them', () => {
    const config = resolveBreakerOptions('sudden', {});
    // 94 calls before the streak, none failed: 6 in a row are enough, 5 are not.
    expect(tripReason(config, streakAfter(94, 0, 5), 5, clock)).toBeUndefined();
    expect(tripReason(config, streakAfter(94, 0, 6), 6, clock)).toBe('consecutive-failures');
    // Healthy is at most 10% failed before the streak: 9 of 90 is, 10 of 90 is not.
    expect(tripReason(config, streakAfter(90, 9, 6), 6, clock)).toBe('consecutive-failures');
    expect(tripReason(config, streakAfter(90, 10, 6), 6, clock)).toBeUndefined();
    // A brownout's window (30% failed) needs the whole streak of 10.
    expect(tripReason(config, streakAfter(90, 27, 9), 9, clock)).toBeUndefined();
    expect(tripReason(config, streakAfter(90, 27, 10), 10, clock)).toBe('consecutive-failures');
  });

  it('a sudden streak needs minimumThroughput calls before it, and the whole streak in the window', () => {
    const config = resolveBreakerOptions('sudden-population', {});
    expect(tripReason(config, streakAfter(19, 0, 6), 6, clock)).toBeUndefined();
    expect(tripReason(config, streakAfter(20, 0, 6), 6, clock)).toBe('consecutive-failures');
    // The window holds 4 failures of a streak of 6 (the first two aged out): it says nothing about before.
    expect(tripReason(config, streakAfter(40, 0, 4), 6, clock)).toBeUndefined();
  });

  it('no sudden streak without the rate rule beside it (consecutiveFailures alone, or false)', () => {
    const classic = resolveBreakerOptions('classic', { consecutiveFailures: 10 });
    expect(tripReason(classic, streakAfter(94, 0, 6), 6, clock)).toBeUndefined();
    const rateOnly = resolveBreakerOptions('rate-only', { consecutiveFailures: false });
    expect(tripReason(rateOnly, streakAfter(94, 0, 6), 6, clock)).toBeUndefined();
    // A streak of 4 beside the rate rule: the sudden streak is 3.
    const short = resolveBreakerOptions('short', { consecutiveFailures: 4, minimumThroughput: 20 });
    expect(tripReason(short, streakAfter(50, 0, 3), 3, clock)).toBe('consecutive-failures');
  });

  it('the sudden streak is a little over half the streak, never more than it', () => {
    expect([1, 2, 3, 4, 5, 10, 20].map(suddenStreak)).toEqual([1, 2, 3, 3, 4, 6, 11]);
  });

  it('an unreachable streak: 4 refused or timed-out calls in a row open a default breaker whose window was clean', () => {
    const config = resolveBreakerOptions('unreachable', {});
    expect(tripReason(config, streakAfter(94, 0, 3), 3, clock, true)).toBeUndefined();
    expect(tripReason(config, streakAfter(94, 0, 4), 4, clock, true)).toBe('consecutive-failures');
    // The same 4 failures answered (a 5xx): the sudden streak of 6 applies.
    expect(tripReason(config, streakAfter(94, 0, 4), 4, clock, false)).toBeUndefined();
    // Clean is at most 5% failed before the streak: 4 of 80 is, 5 of 80 is not (6 in a row then).
    expect(tripReason(config, streakAfter(80, 4, 4), 4, clock, true)).toBe('consecutive-failures');
    expect(tripReason(config, streakAfter(80, 5, 4), 4, clock, true)).toBeUndefined();
    expect(tripReason(config, streakAfter(80, 5, 6), 6, clock, true)).toBe('consecutive-failures');
    // It needs minimumThroughput calls before it too.
    expect(tripReason(config, streakAfter(19, 0, 4), 4, clock, true)).toBeUndefined();
    expect(tripReason(config, streakAfter(20, 0, 4), 4, clock, true)).toBe('consecutive-failures');
  });

  it('the unreachable streak is a little under half the streak, at least 3, never more than the sudden streak', () => {
    expect([1, 2, 3, 4, 5, 6, 10, 20].map(unreachableStreak)).toEqual([1, 2, 3, 3, 3, 3, 4, 9]);
  });

  it('over any window, the unreachable streak opens exactly where its rule says, and wherever the others would', () => {
    const config = resolveBreakerOptions('unreachable-property', {});
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 90 }),
        fc.integer({ min: 0, max: 10 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (before, streak, share) => {
          const failedBefore = Math.floor(before * share);
          const window = streakAfter(before, failedBefore, streak);
          const answered = tripReason(config, window, streak, clock, false);
          const unreachable = tripReason(config, window, streak, clock, true);
          // Unreachable never keeps closed what an answered streak would open.
          if (answered !== undefined) expect(unreachable).toBe(answered);
          const calls = before + streak;
          const failures = failedBefore + streak;
          const clean = before >= 20 && failedBefore / before <= 0.05;
          const expected =
            streak >= 10 || (streak >= 4 && clean)
              ? 'consecutive-failures'
              : (answered ?? (calls >= 20 && failures / calls >= 0.5 ? 'failure-rate' : undefined));
          expect(unreachable).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});
