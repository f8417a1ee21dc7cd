import { describe, expect, it } from 'vitest';
import { resolveBreakerOptions } from '../../lib/core/options/resolve-options.js';
import { tripReason } from '../../lib/core/state/trip-rules.js';
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
});
