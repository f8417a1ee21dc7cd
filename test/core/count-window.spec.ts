import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountWindow } from '../../lib/core/window/count-window.js';
import {
  SLOT_FAILURE,
  SLOT_OVERLOAD,
  SLOT_SHED,
  SLOT_SLOW,
  SLOT_SUCCESS,
} from '../../lib/core/window/outcome-window.interface.js';
import { WINDOW_SLOTS } from '../helpers/window-slots.js';

const SLOTS = WINDOW_SLOTS;

describe('CountWindow', () => {
  it('counts exactly the last `size` outcomes, for any size and sequence (against a plain array)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 45 }),
        fc.array(fc.constantFrom(...SLOTS), { maxLength: 200 }),
        (size, slots) => {
          const window = new CountWindow(size);
          slots.forEach((slot) => window.record(slot, 0));
          const last = slots.slice(-size);
          expect({
            calls: window.calls,
            failures: window.failures,
            slowCalls: window.slowCalls,
            overloads: window.overloads,
            shed: window.shed,
          }).toEqual({
            calls: last.filter((s) => s & (SLOT_SUCCESS | SLOT_FAILURE)).length,
            failures: last.filter((s) => s & SLOT_FAILURE).length,
            slowCalls: last.filter((s) => s & SLOT_SLOW).length,
            overloads: last.filter((s) => s === SLOT_OVERLOAD).length,
            shed: last.filter((s) => s === SLOT_SHED).length,
          });
        },
      ),
      { seed: 20261130, numRuns: 2_000 },
    );
  });

  it('stays exact through long runs of successes, which a full window of successes does not write', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 45 }),
        // Runs of one slot: long runs of successes fill the window with them, then anything may follow.
        fc.array(fc.tuple(fc.constantFrom(...SLOTS), fc.integer({ min: 1, max: 120 })), {
          maxLength: 12,
        }),
        (size, runs) => {
          const slots = runs.flatMap(([slot, n]) => Array.from({ length: n }, () => slot));
          const window = new CountWindow(size);
          slots.forEach((slot) => window.record(slot, 0));
          const last = slots.slice(-size);
          expect([
            window.calls,
            window.failures,
            window.slowCalls,
            window.overloads,
            window.shed,
          ]).toEqual([
            last.filter((s) => s & (SLOT_SUCCESS | SLOT_FAILURE)).length,
            last.filter((s) => s & SLOT_FAILURE).length,
            last.filter((s) => s & SLOT_SLOW).length,
            last.filter((s) => s === SLOT_OVERLOAD).length,
            last.filter((s) => s === SLOT_SHED).length,
          ]);
        },
      ),
      { seed: 20261202, numRuns: 2_000 },
    );
  });

  it('evicts the first failure after a run of successes exactly `size` records later', () => {
    const window = new CountWindow(100);
    for (let i = 0; i < 250; i++) window.record(SLOT_SUCCESS, 0);
    for (let i = 0; i < 3; i++) window.record(SLOT_FAILURE, 0);
    for (let i = 0; i < 97; i++) window.record(SLOT_SUCCESS, 0);
    expect([window.calls, window.failures]).toEqual([100, 3]);
    window.record(SLOT_SUCCESS, 0);
    expect([window.calls, window.failures]).toEqual([100, 2]);
  });

  it('reset() empties it', () => {
    const window = new CountWindow(3);
    window.record(SLOT_FAILURE, 0);
    window.reset();
    window.record(SLOT_SUCCESS, 0);
    window.record(SLOT_SUCCESS, 0);
    window.record(SLOT_SUCCESS, 0);
    expect({ calls: window.calls, failures: window.failures }).toEqual({ calls: 3, failures: 0 });
  });
});
