import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CallRejectedError,
  CallTimeoutError,
  type BreakerChannel,
  type BreakerChannels,
} from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';

/** A channel as Node's are, that counts the reads of `hasSubscribers` and keeps a copy of each message as published. */
class CountingChannel implements BreakerChannel {
  subscribed = false;
  reads = 0;
  readonly messages: Record<string, unknown>[] = [];
  readonly objects: unknown[] = [];
  get hasSubscribers(): boolean {
    this.reads++;
    return this.subscribed;
  }
  publish(message: unknown): void {
    this.objects.push(message);
    this.messages.push({ ...(message as object) });
  }
}

function channels() {
  const callStart = new CountingChannel();
  const callSettle = new CountingChannel();
  const quiet = { hasSubscribers: false, publish() {} };
  const all: BreakerChannels = { rejected: quiet, stateChange: quiet, callStart, callSettle };
  return { all, callStart, callSettle };
}

describe('call channels (deps.channels.callStart / callSettle)', () => {
  it('publish one message per call: at its start, then with its result or error', async () => {
    const { all, callStart, callSettle } = channels();
    callStart.subscribed = callSettle.subscribed = true;
    const breaker = new Breaker(
      'traced',
      { consecutiveFailures: 1, timeoutMs: false, openDurationMs: 1_000 },
      { clock: new ManualClock(), channels: all },
    );
    await expect(breaker.execute(() => 7)).resolves.toBe(7);
    const down = new Error('down');
    await expect(breaker.execute(() => Promise.reject(down))).rejects.toBe(down);
    const refused = await breaker.execute(() => 1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CallRejectedError);
    expect(callStart.messages).toEqual([
      { breaker: 'traced' },
      { breaker: 'traced' },
      { breaker: 'traced' },
    ]);
    expect(callSettle.messages).toEqual([
      { breaker: 'traced', result: 7 },
      { breaker: 'traced', error: down },
      { breaker: 'traced', error: refused },
    ]);
    // The same object at start and settle: a subscriber keeps its span on it.
    expect(callSettle.objects).toEqual(callStart.objects);
    expect(callSettle.objects[0]).toBe(callStart.objects[0]);
  });

  it("a call's own deadline applies on the observed path too", async () => {
    const { all, callSettle } = channels();
    callSettle.subscribed = true;
    const clock = new ManualClock();
    const breaker = new Breaker('slow', { timeoutMs: 100 }, { clock, channels: all });
    const pending = breaker.execute(() => new Promise(() => {}), { timeoutMs: 300 });
    const outcome = pending.catch((e: unknown) => e);
    clock.advance(299);
    clock.advance(1);
    expect(await outcome).toEqual(new CallTimeoutError('slow', 300));
    await Promise.resolve();
    expect(callSettle.messages).toEqual([
      { breaker: 'slow', error: new CallTimeoutError('slow', 300) },
    ]);
  });

  it('publish the calls of acquire() when the permit settles, by whichever way', async () => {
    const { all, callStart, callSettle } = channels();
    callStart.subscribed = callSettle.subscribed = true;
    const clock = new ManualClock();
    const breaker = new Breaker(
      'permits',
      { consecutiveFailures: 3, timeoutMs: 100 },
      { clock, channels: all },
    );
    breaker.acquire().succeed('value');
    const down = new Error('down');
    breaker.acquire().fail(down);
    breaker.acquire().release();
    const expiring = breaker.acquire({ timeoutMs: 50 });
    expiring.watchDeadline(() => {});
    expect(callSettle.messages).toHaveLength(3);
    clock.advance(50);
    breaker.force('open', { reason: 'test' });
    expect(() => breaker.acquire()).toThrow(CallRejectedError);
    expect(callStart.messages).toHaveLength(5);
    expect(
      callSettle.messages.map(({ result, error, ...rest }) => ({ ...rest, result, error })),
    ).toEqual([
      { breaker: 'permits', result: 'value', error: undefined },
      { breaker: 'permits', result: undefined, error: down },
      { breaker: 'permits', result: undefined, error: undefined },
      { breaker: 'permits', result: undefined, error: new CallTimeoutError('permits', 50) },
      { breaker: 'permits', result: undefined, error: expect.any(CallRejectedError) },
    ]);
    expect(callSettle.messages[2]).toEqual({ breaker: 'permits' });
    expect(callSettle.objects).toEqual(callStart.objects);
  });

  it("a permit released with a reason (the caller's cancel) settles with it as its error, and so does its ignored event", () => {
    const { all, callSettle } = channels();
    callSettle.subscribed = true;
    const breaker = new Breaker(
      'permits',
      { timeoutMs: 100 },
      { clock: new ManualClock(), channels: all },
    );
    const ignored: unknown[] = [];
    breaker.on('ignored', ({ error }) => ignored.push(error));
    const gone = new Error('gone');
    const permit = breaker.acquire();
    permit.release(gone);
    permit.release(new Error('later'));
    expect(callSettle.messages).toEqual([{ breaker: 'permits', error: gone }]);
    expect(ignored).toEqual([gone]);
    expect(breaker.snapshot().totals.ignored).toBe(1);
  });

  it('with nobody subscribed, publish nothing and read each hasSubscribers once per call', async () => {
    const { all, callStart, callSettle } = channels();
    const breaker = new Breaker('quiet', { timeoutMs: false }, { channels: all });
    for (let i = 0; i < 3; i++) await breaker.execute(() => i);
    breaker.acquire().succeed(1);
    expect([callStart.reads, callSettle.reads]).toEqual([4, 4]);
    expect([callStart.objects, callSettle.objects]).toEqual([[], []]);
  });

  it('cost nothing without call channels: channels of refusals and transitions only', async () => {
    const quiet = new CountingChannel();
    const breaker = new Breaker(
      'old-channels',
      { timeoutMs: false },
      { channels: { rejected: quiet, stateChange: quiet } },
    );
    await breaker.execute(() => 1);
    expect(quiet.reads).toBe(0);
  });

  it("a subscriber that throws is not the caller's business", async () => {
    const throwing: BreakerChannel = {
      hasSubscribers: true,
      publish() {
        throw new Error('subscriber bug');
      },
    };
    const quiet = { hasSubscribers: false, publish() {} };
    const breaker = new Breaker(
      'sturdy',
      { timeoutMs: false },
      {
        channels: {
          rejected: quiet,
          stateChange: quiet,
          callStart: throwing,
          callSettle: throwing,
        },
      },
    );
    await expect(breaker.execute(() => 'ok')).resolves.toBe('ok');
    expect(breaker.snapshot().totals.successes).toBe(1);
  });

  it('refuse a call channel that cannot publish, naming the breaker and the dep', () => {
    const quiet = { hasSubscribers: false, publish() {} };
    expect(
      () =>
        new Breaker(
          'typo',
          {},
          {
            channels: {
              rejected: quiet,
              stateChange: quiet,
              callSettle: {},
            } as unknown as BreakerChannels,
          },
        ),
    ).toThrow(
      'Circuit breaker "typo": channels.callSettle must be a channel with hasSubscribers and publish(), such as breakerChannels() of nestjs-circuit-breaker/diagnostics gives, got an object. Pass a valid channels or leave it out for the default.',
    );
  });
});
