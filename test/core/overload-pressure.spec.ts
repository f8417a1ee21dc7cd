import { describe, expect, it } from 'vitest';
import { OverloadPressure } from '../../lib/core/overload/overload-pressure.js';
import { resolveBreakerOptions } from '../../lib/core/options/resolve-options.js';

const never = { draw: () => 1 };
const always = { draw: () => 0 };

describe('OverloadPressure (what a closed breaker holds while its dependency sheds load)', () => {
  it('honours a Retry-After pause, capped by maxRetryAfterMs, until it passes', () => {
    const config = resolveBreakerOptions('pause', { overload: false, maxRetryAfterMs: 5_000 });
    const pressure = new OverloadPressure();
    pressure.record(config, 1_000, 30_000, 0);
    expect([
      pressure.pauseLeft(1_000),
      pressure.pauseLeft(5_999),
      pressure.pauseLeft(6_000),
    ]).toEqual([5_000, 1, 0]);
    expect(pressure.spent).toBe(true);
  });

  it('keeps the later of two pauses', () => {
    const config = resolveBreakerOptions('pauses', { overload: false });
    const pressure = new OverloadPressure();
    pressure.record(config, 0, 2_000, 0);
    pressure.record(config, 500, 1_000, 0);
    expect(pressure.pausedUntil).toBe(2_000);
  });

  it('sheds in proportion to refusals once minimumThroughput requests were seen, and draws randomness only then', () => {
    const config = resolveBreakerOptions('shed', { overload: { k: 2 }, minimumThroughput: 4 });
    const pressure = new OverloadPressure();
    let draws = 0;
    const counting = { draw: () => (draws++, 0) };
    pressure.record(config, 0, undefined, 0);
    expect(pressure.shed(config, 0, counting)).toBe(false);
    expect(draws).toBe(0);
    for (let i = 0; i < 5; i++) pressure.record(config, 0, undefined, 0);
    expect(pressure.shed(config, 0, counting)).toBe(true);
    expect([draws, pressure.shedInWindow(0)]).toEqual([1, 1]);
    expect(pressure.shed(config, 0, never)).toBe(false);
  });

  it('drops the throttle when the overloads have left its window, and a transition drops it while a pause stands', () => {
    const config = resolveBreakerOptions('ages', {
      overload: { k: 2 },
      minimumThroughput: 1,
      window: { type: 'time', durationMs: 1_000, buckets: 10 },
    });
    const pressure = new OverloadPressure();
    pressure.record(config, 0, 10_000, 0);
    // A pause the dependency asked for is the back-off itself, no evidence to shed by.
    expect(pressure.throttle).toBeUndefined();
    pressure.record(config, 0, undefined, 0);
    expect(pressure.shed(config, 0, always)).toBe(true);
    expect(pressure.shed(config, 5_000, always)).toBe(false);
    expect(pressure.throttle).toBeUndefined();
    pressure.record(config, 5_000, undefined, 0);
    pressure.endEvidence();
    expect([pressure.throttle, pressure.spent, pressure.pauseLeft(5_000)]).toEqual([
      undefined,
      false,
      5_000,
    ]);
  });
});
