import { describe, expect, it } from 'vitest';
import { Breaker, type BreakerCoordinator } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('engine rules found in review', () => {
  it('the slow-call rule applies beside consecutiveFailures too', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('slow-and-streak', { consecutiveFailures: 5, slowCallDurationMs: 100, slowCallRateThreshold: 0.5, minimumThroughput: 4, window: { type: 'count', size: 4 } }, { clock });
    for (let i = 0; i < 4; i++) {
      await breaker.execute(() => {
        clock.advance(100);
        return 'slow but fine';
      });
    }
    expect(breaker.state).toBe('open');
  });

  it('a success that completes the window never sets the open duration from its own Retry-After', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('hinted-success', { window: { type: 'count', size: 2 }, minimumThroughput: 2, failureRateThreshold: 0.5, openDurationMs: 1_000 }, { clock });
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    await breaker.execute(() => ({ retryAfterMs: 250_000 }));
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: clock.now() + 1_000 });
  });

  it('a family past its open duration whose fleet probe is elsewhere estimates the probe deadline, never a negative wait', async () => {
    const clock = new ManualClock(0);
    const coordinator: BreakerCoordinator = { transitioned: () => undefined, mayProbe: () => false };
    const family = new Breaker('fleet', { perKey: { maxKeys: 10 }, aggregate: { openWhenOpenRatio: 0.5, minKeys: 2 }, consecutiveFailures: 1, openDurationMs: 1_000, halfOpen: { maxWaitMs: 3_000 } }, { clock, coordinator });
    await family.forKey('a').execute(() => Promise.reject(new Error('x'))).catch(() => undefined);
    await family.forKey('b').execute(() => Promise.reject(new Error('x'))).catch(() => undefined);
    expect(family.lastDecidedState).toBe('open');
    clock.advance(5_000);
    const rejection = await family.forKey('c').execute(() => 1).catch((e: unknown) => e);
    expect(rejection).toMatchObject({ breakerName: 'fleet', reason: 'open', retryAfterMs: 3_000 });
  });

  it('a caller that aborts while the call is being started gets its own reason', async () => {
    const breaker = new Breaker('abort-inside', { timeoutMs: 1_000 });
    const controller = new AbortController();
    const call = breaker.execute(() => {
      controller.abort(new Error('changed my mind'));
      return new Promise(() => undefined);
    }, { signal: controller.signal });
    await expect(call).rejects.toThrow('changed my mind');
    expect(breaker.snapshot().totals.ignored).toBe(1);
  });

  it('a listener that comes and goes does not leave the breaker timing every call', () => {
    const breaker = new Breaker('transient');
    const timed = () => (breaker as unknown as { timed: boolean }).timed;
    const hub = () => (breaker as unknown as { hub: unknown }).hub;
    const off = breaker.on('success', () => undefined);
    const offChange = breaker.on('stateChange', () => undefined);
    expect(timed()).toBe(true);
    off();
    expect(timed()).toBe(false);
    offChange();
    expect(hub()).toBeUndefined();
    const timeWindow = new Breaker('time', { window: { type: 'time', durationMs: 1_000 } });
    timeWindow.on('success', () => undefined)();
    expect((timeWindow as unknown as { timed: boolean }).timed).toBe(true);
  });
});
