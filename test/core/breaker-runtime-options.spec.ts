import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

// The runtime API checks its options objects as start-up does: an unknown key is an error naming
// it and the closest valid one, and nothing changes (a misspelt `until` must not leave a force on for good).
describe('runtime options objects: unknown keys', () => {
  const breakerOn = (clock: ManualClock) =>
    new Breaker('payments', { timeoutMs: false }, { clock, faultInjection: true });

  it("force('open', { reason, until }) is refused, naming until and untilMs, and forces nothing", () => {
    const clock = new ManualClock(1_000_000);
    const breaker = breakerOn(clock);
    expect(() =>
      breaker.force('open', { reason: 'maintenance', until: 1_060_000 } as never),
    ).toThrow(
      new TypeError(
        'Circuit breaker "payments": force() has no option "until". Did you mean "untilMs"? Its options are reason, by and untilMs; nothing changed.',
      ),
    );
    expect([breaker.state, breaker.snapshot().forced]).toEqual(['closed', undefined]);
    expect(() => breaker.force('open', { reason: 'x', owner: 'ops' } as never)).toThrow(
      'force() has no option "owner". Its options are reason, by and untilMs; nothing changed.',
    );
  });

  it('injectFault() names the closest option of a misspelt one', () => {
    const breaker = breakerOn(new ManualClock());
    expect(() => breaker.injectFault({ fail: true, rte: 0.5 } as never)).toThrow(
      new TypeError(
        'Circuit breaker "payments": injectFault() has no option "rte". Did you mean "rate"? Use fail, latencyMs, overload, rate or random.',
      ),
    );
    expect(breaker.snapshot().injectedFault).toBeUndefined();
  });

  it('reconfigure() names the closest option of a misspelt one, at any depth, and keeps the options', () => {
    const breaker = breakerOn(new ManualClock());
    expect(() => breaker.reconfigure({ timeoutMS: 5_000 } as never)).toThrow(
      /^Circuit breaker "payments": unknown option "timeoutMS"\. Known options: .*\. Did you mean "timeoutMs"\?$/,
    );
    expect(() => breaker.reconfigure({ halfOpen: { maxProbe: 2 } } as never)).toThrow(
      'Circuit breaker "payments": unknown option "halfOpen.maxProbe". Known options: halfOpen.maxProbes, halfOpen.maxConcurrent, halfOpen.successesToClose, halfOpen.probeTimeoutMs, halfOpen.maxWaitMs. Did you mean "halfOpen.maxProbes"?',
    );
    expect(breaker.config.timeoutMs).toBeUndefined();
  });
});
