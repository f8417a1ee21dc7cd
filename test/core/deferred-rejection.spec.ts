import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Breaker, CallRejectedError, type RejectionReason } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { ManualClock } from '../helpers/manual-clock.js';

const FAILURE = new Error('dependency down');

/** Whether `promise` is still pending, read without attaching a handler to it. */
const isPending = (promise: Promise<unknown>) => inspect(promise).includes('<pending>');

/** One breaker per way of refusing a call, each already refusing. */
const refusing: Record<string, () => Promise<{ breaker: Breaker; reason: RejectionReason }>> = {
  open: async () => {
    const breaker = new Breaker('open', { consecutiveFailures: 1, timeoutMs: false });
    await breaker.execute(() => Promise.reject(FAILURE)).catch(() => undefined);
    return { breaker, reason: 'open' };
  },
  isolated: async () => {
    const breaker = new Breaker('isolated');
    breaker.isolate();
    return { breaker, reason: 'isolated' };
  },
  'half-open-busy': async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'probing',
      { consecutiveFailures: 1, timeoutMs: false, openDurationMs: 1_000 },
      { clock },
    );
    await breaker.execute(() => Promise.reject(FAILURE)).catch(() => undefined);
    clock.advance(1_000);
    void breaker.execute(() => deferred<number>().promise);
    return { breaker, reason: 'half-open-busy' };
  },
  'bulkhead-full': async () => {
    const breaker = new Breaker('bulkhead', { timeoutMs: false, bulkhead: { maxConcurrent: 1 } });
    void breaker.execute(() => deferred<number>().promise);
    return { breaker, reason: 'bulkhead-full' };
  },
  'family open': async () => {
    const family = new Breaker('family', { perKey: {} });
    family.isolate();
    return { breaker: family.forKey('a'), reason: 'isolated' };
  },
};

describe('a refused call', () => {
  it.each(Object.keys(refusing))(
    '(%s) gets a promise still pending when execute() returns, rejected with the CallRejectedError once awaited',
    async (name) => {
      const { breaker, reason } = await refusing[name]();
      let ran = 0;
      const promise = breaker.execute(async () => ++ran);

      // Pending, so the caller's handler is attached before it rejects: Node has nothing to track.
      expect(isPending(promise)).toBe(true);
      const error = await promise.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CallRejectedError);
      expect((error as CallRejectedError).reason).toBe(reason);
      expect(ran).toBe(0);
    },
  );

  it('is rejected within the same turn: one microtask later than an already-rejected promise', async () => {
    const { breaker } = await refusing.open();
    const order: string[] = [];
    void breaker.execute(async () => 1).catch(() => order.push('breaker'));
    void Promise.reject(FAILURE).catch(() => order.push('already rejected'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['already rejected', 'breaker']);
  });

  it('acquire() still throws at once (no promise to defer)', async () => {
    const { breaker } = await refusing.open();
    expect(() => breaker.acquire()).toThrow(CallRejectedError);
  });

  describe('that nobody handles', () => {
    const reported: unknown[] = [];
    const onUnhandled = (reason: unknown) => reported.push(reason);
    let theirs: NodeJS.UnhandledRejectionListener[] = [];
    // The test runner's own listener would fail the run: it is set aside while these tests run.
    beforeEach(() => {
      reported.length = 0;
      theirs = process.listeners('unhandledRejection');
      process.removeAllListeners('unhandledRejection');
      process.on('unhandledRejection', onUnhandled);
    });
    afterEach(() => {
      process.off('unhandledRejection', onUnhandled);
      for (const listener of theirs) process.on('unhandledRejection', listener);
    });

    it('is still reported by Node as an unhandled rejection, with the CallRejectedError', async () => {
      const { breaker } = await refusing.open();
      void breaker.execute(async () => 1);
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(reported).toHaveLength(1);
      expect(reported[0]).toBeInstanceOf(CallRejectedError);
      expect((reported[0] as CallRejectedError).breakerName).toBe('open');
    });
  });
});
