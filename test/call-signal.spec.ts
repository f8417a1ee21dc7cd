import { describe, expect, it } from 'vitest';
import { getCallSignal, runWithCallSignal } from '../lib/call-signal.js';

// Module state (whether anything asked for a call signal) is per test file: the order of these tests matters.
describe('getCallSignal()', () => {
  const call = () => {
    const controller = new AbortController();
    return { signal: controller.signal };
  };

  it("until something asks, a call is current only for its method's synchronous part; the first ask turns on async context", async () => {
    const first = call();
    const afterAwait = await runWithCallSignal(
      first,
      async () => {
        await Promise.resolve();
        return getCallSignal();
      },
      false,
    );
    // The edge this trade-off accepts: the very first read, after an await, in a method whose source does not name getCallSignal.
    expect(afterAwait).toBeUndefined();
    const second = call();
    const later = await runWithCallSignal(
      second,
      async () => {
        await Promise.resolve();
        return getCallSignal();
      },
      false,
    );
    expect(later).toBe(second.signal);
  });

  it('the synchronous part always sees its own call, nested calls included, and nothing outside', () => {
    const outer = call();
    const inner = call();
    const seen = runWithCallSignal(
      outer,
      () => {
        const before = getCallSignal();
        const nested = runWithCallSignal(inner, () => getCallSignal(), false);
        return [before, nested, getCallSignal()];
      },
      false,
    );
    expect(seen).toEqual([outer.signal, inner.signal, outer.signal]);
    expect(getCallSignal()).toBeUndefined();
  });

  it('a method that reads the signal itself has it across awaits from its first call', async () => {
    const only = call();
    const signal = await runWithCallSignal(only, async () => {
      await Promise.resolve();
      return getCallSignal();
    });
    expect(signal).toBe(only.signal);
  });
});
