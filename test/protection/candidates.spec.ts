import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { adaptiveDeadline, adaptiveRamp } from '../../bench/protection/candidates.mjs';

// The two levers the candidate defaults model outside the engine
// (bench/protection/candidates.mjs), checked on their own with exact values.

describe('candidate defaults: the adaptive slow start (a model)', () => {
  function ramped() {
    let now = 0;
    let listener!: (change: { from: string; to: string; reason: string }) => void;
    const gate = adaptiveRamp({ on: (_event, fn) => (listener = fn) }, () => now);
    return {
      close: () => listener({ from: 'half-open', to: 'closed', reason: 'probes-succeeded' }),
      open: () => listener({ from: 'closed', to: 'open', reason: 'failure-rate' }),
      at: (ms: number) => (now = ms),
      /** Offers `count` calls that settle as `ok` says; answers how many passed the gate. */
      offer: async (count: number, ok = true) => {
        let passed = 0;
        const calls = Array.from({ length: count }, () =>
          gate(() => {
            passed++;
            return ok ? Promise.resolve('ok') : Promise.reject(new Error('503'));
          }).catch(() => undefined),
        );
        await Promise.all(calls);
        return passed;
      },
    };
  }

  it('admits everything until a recovery closes the breaker, then 10 %, doubling every 250 ms of successes', async () => {
    const ramp = ramped();
    expect(await ramp.offer(100)).toBe(100);
    ramp.close();
    expect(await ramp.offer(100)).toBe(10);
    ramp.at(250);
    expect(await ramp.offer(100)).toBe(20);
    ramp.at(500);
    // 0.4 of 100, and the credit left over from the step before.
    expect(await ramp.offer(100)).toBe(41);
    ramp.at(750);
    expect(await ramp.offer(100)).toBe(80);
    // 1.6: the ramp is over.
    ramp.at(1_000);
    expect(await ramp.offer(100)).toBe(100);
  });

  it('halves the share after a step with a failure, never below 10 %, and ends with the next opening', async () => {
    const ramp = ramped();
    ramp.close();
    expect(await ramp.offer(100)).toBe(10);
    ramp.at(250);
    expect(await ramp.offer(100, false)).toBe(20);
    ramp.at(500);
    expect(await ramp.offer(100, false)).toBe(10);
    ramp.at(750);
    expect(await ramp.offer(100)).toBe(10);
    ramp.at(1_000);
    expect(await ramp.offer(100)).toBe(20);
    ramp.open();
    expect(await ramp.offer(100)).toBe(100);
  });
});

describe('candidate defaults: the adaptive deadline (a model)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const hang = (signal?: AbortSignal) =>
    new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));

  it('is 10 s until 32 successes are seen, then 5 x their p99 (at least 500 ms)', async () => {
    const deadline = adaptiveDeadline(() => Date.now());
    const timed = (ms: number) => () =>
      new Promise((resolve) => {
        setTimeout(resolve, ms);
      });
    const first = deadline(hang)().catch((error: Error) => [error.name, Date.now()]);
    const started = Date.now();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await first).toEqual(['TimeoutError', started + 10_000]);
    // 31 successes of 200 ms: still 10 s; the 32nd sets 5 x 200 ms.
    for (let i = 0; i < 32; i++) {
      const call = deadline(timed(200))();
      await vi.advanceTimersByTimeAsync(200);
      await call;
    }
    const second = deadline(hang)().catch((error: Error) => [error.name, Date.now()]);
    const from = Date.now();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await second).toEqual(['TimeoutError', from + 1_000]);
  });

  it('passes the caller’s abort through to the call', async () => {
    const deadline = adaptiveDeadline(() => Date.now());
    const controller = new AbortController();
    const call = deadline(hang)(controller.signal).catch((error: Error) => error.message);
    controller.abort(new Error('client timeout'));
    expect(await call).toBe('client timeout');
  });
});
