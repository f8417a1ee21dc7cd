import { Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/index.js';
import { withCircuitBreaker } from '../../lib/grpc/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import { CatalogUpstream, echo, tally, unary } from './grpc-upstream.js';

// Client-streaming and bidirectional calls through the client interceptor: the messages the caller sends go to the
// call once it is made, in order, and are held while an injected fault's latency delays it.

type CatalogClient = Client & Record<string, Function>;

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

const MESSAGES = [{ n: 1 }, { n: 2 }, { n: 3 }];

/**
 * A client stream written as a caller that minds back-pressure does: each write's callback, the end's, `finish`,
 * and the answer, in the order they came. Resolves once the answer has come and the ticks after it have run.
 */
function writeAndWatch(client: CatalogClient): { events: string[]; answered: Promise<void> } {
  const events: string[] = [];
  const answered = new Promise<void>((resolve) => {
    const call = client.tally!(new Metadata(), {}, (error: ServiceError | null) => {
      events.push(`answer ${error?.code ?? 'ok'}`);
      resolve();
    });
    call.on('finish', () => events.push('finish'));
    call.write({ n: 1 }, () => events.push('write 1'));
    call.write({ n: 2 }, () => events.push('write 2'));
    call.end(() => events.push('end'));
  }).then(tick);
  return { events, answered };
}

describe('withCircuitBreaker() on client-streaming and bidirectional grpc-js calls', () => {
  let upstream: CatalogUpstream;
  let clock: ManualClock;
  let breaker: Breaker;
  let client: CatalogClient;

  beforeEach(async () => {
    upstream = await new CatalogUpstream().start();
    clock = new ManualClock();
    breaker = new Breaker('catalog', { timeoutMs: 2_000 }, { clock, faultInjection: true });
    client = upstream.client({ interceptors: [withCircuitBreaker({ breaker })] });
  });
  afterEach(async () => {
    client.close();
    await upstream.stop();
  });

  it('passes a client stream and a bidirectional stream through closed, each counted once', async () => {
    const tallied = await tally(client, MESSAGES);
    const echoed = await echo(client, [{ n: 4 }, { n: 5 }]);

    expect(tallied).toEqual({ value: { read: MESSAGES } });
    expect([echoed.messages, echoed.status.code]).toEqual([
      [{ echo: { n: 4 } }, { echo: { n: 5 } }],
      status.OK,
    ]);
    expect(upstream.received).toEqual(['/shop.Catalog/Tally', '/shop.Catalog/Echo']);
    expect(upstream.messages).toEqual([...MESSAGES, { n: 4 }, { n: 5 }]);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 2, successes: 2 });
  });

  it('refuses both while open with UNAVAILABLE: neither the call nor a message reaches the server', async () => {
    breaker.force('open', { reason: 'maintenance' });

    const tallied = await tally(client, MESSAGES);
    const echoed = await echo(client, MESSAGES);

    expect([tallied.error!.code, tallied.error!.metadata.get('circuit-breaker-reason')]).toEqual([
      status.UNAVAILABLE,
      ['isolated'],
    ]);
    expect([echoed.messages, echoed.status.code]).toEqual([[], status.UNAVAILABLE]);
    expect([upstream.received, upstream.messages]).toEqual([[], []]);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 0, rejected: { total: 2 } });
  });

  it("holds a client stream's messages during a fault's latency and replays them in order", async () => {
    breaker.injectFault({ latencyMs: 500, rate: 0.5 });

    const tallied = tally(client, MESSAGES);
    await tick();
    // A call the fault spares, on the same channel: had the delayed call been made, the server would have it by then.
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    expect([upstream.received, upstream.messages]).toEqual([['/shop.Catalog/Price'], []]);
    clock.advance(500);

    expect(await tallied).toEqual({ value: { read: MESSAGES } });
    expect(upstream.received).toEqual(['/shop.Catalog/Price', '/shop.Catalog/Tally']);
    expect(upstream.messages).toEqual(MESSAGES);
    expect(breaker.snapshot().totals.successes).toBe(2);
  });

  it("holds a bidirectional stream's messages during a fault's latency, then echoes them in order", async () => {
    breaker.injectFault({ latencyMs: 500, rate: 0.5 });

    const echoed = echo(client, MESSAGES);
    await tick();
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    expect([upstream.received, upstream.messages]).toEqual([['/shop.Catalog/Price'], []]);
    clock.advance(500);
    const { messages, status: end } = await echoed;

    expect([messages, end.code]).toEqual([MESSAGES.map((n) => ({ echo: n })), status.OK]);
    expect(upstream.received).toEqual(['/shop.Catalog/Price', '/shop.Catalog/Echo']);
    expect(upstream.messages).toEqual(MESSAGES);
    expect(breaker.snapshot().totals.successes).toBe(2);
  });

  it("ends both with DEADLINE_EXCEEDED when the breaker's deadline comes during the latency, never making them", async () => {
    breaker.injectFault({ latencyMs: 5_000, rate: 2 / 3 });

    const tallied = tally(client, MESSAGES);
    const echoed = echo(client, MESSAGES);
    await tick();
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    clock.advance(2_000);
    const [{ error }, stream] = await Promise.all([tallied, echoed]);
    clock.advance(3_000);
    await tick();

    expect([error!.code, stream.status.code, stream.messages]).toEqual([
      status.DEADLINE_EXCEEDED,
      status.DEADLINE_EXCEEDED,
      [],
    ]);
    expect([upstream.received, upstream.messages]).toEqual([['/shop.Catalog/Price'], []]);
    expect(breaker.snapshot().totals).toMatchObject({ timeouts: 2, successes: 1 });
  });

  it("ends a stream at its own deadline when that comes during the latency, on the breaker's clock", async () => {
    breaker.injectFault({ latencyMs: 20_000, rate: 0.5 });

    const tallied = tally(client, MESSAGES, { deadline: Date.now() + 10_000 });
    await tick();
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    clock.advance(9_999);
    await tick();
    expect(upstream.received).toEqual(['/shop.Catalog/Price']);
    clock.advance(1);
    const { error } = await tallied;
    clock.advance(10_000);
    await tick();

    expect(error!.code).toBe(status.DEADLINE_EXCEEDED);
    expect([upstream.received, upstream.messages]).toEqual([['/shop.Catalog/Price'], []]);
    expect(breaker.snapshot().totals).toMatchObject({ timeouts: 1, successes: 1 });
  });

  it("completes the caller's writes and end of a stream it refuses, as grpc-js does those of a failed call", async () => {
    breaker.force('open', { reason: 'maintenance' });

    const { events, answered } = writeAndWatch(client);
    await answered;

    expect(events).toEqual(['answer 14', 'write 1', 'write 2', 'end', 'finish']);
    expect(upstream.messages).toEqual([]);
  });

  it('completes the writes held during a latency when the call ends without being made', async () => {
    breaker.injectFault({ latencyMs: 5_000, rate: 0.5 });

    const { events, answered } = writeAndWatch(client);
    await tick();
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    expect(events).toEqual([]);
    clock.advance(2_000);
    await answered;

    // The stream sends its next message once the last is written: only the first was held.
    expect(events).toEqual(['write 1', 'answer 4', 'write 2', 'end', 'finish']);
    expect([upstream.received, upstream.messages]).toEqual([['/shop.Catalog/Price'], []]);
  });
});
