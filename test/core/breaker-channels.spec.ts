import { describe, expect, it } from 'vitest';
import { Breaker, type BreakerChannel, type BreakerChannels } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A channel as Node's diagnostics channels are: messages published only while someone subscribes. */
class TestChannel implements BreakerChannel {
  hasSubscribers = false;
  readonly messages: unknown[] = [];
  reads = 0;
  publish(message: unknown): void {
    this.messages.push(message);
  }
}

function channels(): BreakerChannels & { rejected: TestChannel; stateChange: TestChannel } {
  return { rejected: new TestChannel(), stateChange: new TestChannel() };
}

describe('Breaker channels (deps.channels)', () => {
  it('publishes each refusal and each transition while someone subscribes, exactly as they happened', async () => {
    const clock = new ManualClock(1_000);
    const ch = channels();
    ch.rejected.hasSubscribers = true;
    ch.stateChange.hasSubscribers = true;
    const breaker = new Breaker(
      'payments',
      { consecutiveFailures: 2, timeoutMs: false, openDurationMs: 5_000 },
      { clock, channels: ch },
    );
    for (let i = 0; i < 2; i++)
      await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow(
        'down',
      );
    const refused = breaker.execute(async () => 'never');
    await expect(refused).rejects.toMatchObject({ reason: 'open', retryAfterMs: 5_000 });
    expect(ch.stateChange.messages).toEqual([
      {
        breaker: 'payments',
        from: 'closed',
        to: 'open',
        reason: 'consecutive-failures',
        at: 1_000,
        openUntil: 6_000,
        consecutiveFailures: 2,
      },
    ]);
    expect(ch.rejected.messages).toEqual([
      {
        breaker: 'payments',
        state: 'open',
        reason: 'open',
        retryAfterMs: 5_000,
        error: expect.objectContaining({ name: 'CircuitOpenError', reason: 'open' }),
      },
    ]);
    // The message carries the very error the caller got.
    const error = await refused.catch((e: unknown) => e);
    expect((ch.rejected.messages[0] as { error: unknown }).error).toBe(error);
  });

  it('builds and publishes nothing while nobody subscribes', async () => {
    const ch = channels();
    const breaker = new Breaker(
      'quiet',
      { consecutiveFailures: 1, timeoutMs: false },
      { channels: ch },
    );
    await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await expect(breaker.execute(async () => 1)).rejects.toMatchObject({ reason: 'open' });
    expect(ch.rejected.messages).toEqual([]);
    expect(ch.stateChange.messages).toEqual([]);
  });

  it('goes on when a channel given by hand throws: the caller gets its own answer', async () => {
    const throwing: BreakerChannel = {
      hasSubscribers: true,
      publish() {
        throw new Error('subscriber bug');
      },
    };
    const breaker = new Breaker(
      'sturdy',
      { consecutiveFailures: 1, timeoutMs: false },
      { channels: { rejected: throwing, stateChange: throwing } },
    );
    await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(breaker.state).toBe('open');
    await expect(breaker.execute(async () => 1)).rejects.toMatchObject({ reason: 'open' });
  });

  it('refuses channels that cannot publish, naming the breaker and the dep', () => {
    expect(
      () =>
        new Breaker(
          'typo',
          {},
          { channels: { rejected: {}, stateChange: {} } as unknown as BreakerChannels },
        ),
    ).toThrow(
      'Circuit breaker "typo": channels.rejected must be a channel with hasSubscribers and publish(), such as breakerChannels() of nestjs-circuit-breaker/diagnostics gives, got an object. Pass a valid channels or leave it out for the default.',
    );
  });
});
