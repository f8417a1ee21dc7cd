import { describe, expect, it } from 'vitest';
import { Breaker, CallRejectedError, type StateChangeEvent } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** The third seed's gateway: 503 while its deploy is broken, then it recovers. */
class FlakyGateway {
  calls = 0;
  constructor(
    private readonly brokenUntil: number,
    private readonly clock: ManualClock,
  ) {}
  charge(cents: number): string {
    this.calls++;
    if (this.clock.now() < this.brokenUntil)
      throw Object.assign(new Error('503 unavailable'), { status: 503 });
    return `charged ${cents}`;
  }
}

describe('the payment-gateway scenario of the pattern entry', () => {
  it('two failed charges trip the breaker, the third fails instantly, and after the cool-off a probe closes it', async () => {
    const clock = new ManualClock(1_000);
    const gateway = new FlakyGateway(2_000, clock);
    const breaker = new Breaker(
      'payments.charge',
      { consecutiveFailures: 2, openDurationMs: 5_000 },
      { clock },
    );
    const log: string[] = [];
    breaker.on('stateChange', (e: StateChangeEvent) =>
      log.push(`${e.from} -> ${e.to} at t=${e.at}`),
    );
    const charge = (cents: number) => breaker.execute(() => gateway.charge(cents));

    await expect(charge(500)).rejects.toThrow('503 unavailable'); // failure 1
    await expect(charge(500)).rejects.toThrow('503 unavailable'); // failure 2 -> opens
    expect(breaker.state).toBe('open');

    const rejection = await charge(500).catch((e: unknown) => e);
    expect(rejection).toBeInstanceOf(CallRejectedError);
    expect(rejection).toMatchObject({
      name: 'CallRejectedError',
      reason: 'open',
      retryAfterMs: 5_000,
    });
    expect(gateway.calls).toBe(2); // no gateway call was made

    clock.advance(6_000); // t=7000: the cool-off (5 s) has passed
    await expect(charge(500)).resolves.toBe('charged 500');
    expect(breaker.state).toBe('closed');
    expect(gateway.calls).toBe(3);
    // The half-open transition is made by the t=7000 call, and dated when it was due.
    expect(log).toEqual([
      'closed -> open at t=1000',
      'open -> half-open at t=6000',
      'half-open -> closed at t=7000',
    ]);

    // Success reset the count: one new failure does not reopen.
    const brokenAgain = new FlakyGateway(clock.now() + 10_000, clock);
    await expect(breaker.execute(() => brokenAgain.charge(1))).rejects.toThrow('503');
    expect(breaker.state).toBe('closed');
  });
});
