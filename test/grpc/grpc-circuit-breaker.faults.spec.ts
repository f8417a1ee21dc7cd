import { status, type Client } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/index.js';
import { withCircuitBreaker } from '../../lib/grpc/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import { CatalogUpstream, readStream, startUnary, unary } from './grpc-upstream.js';

// Injected faults (deps.faultInjection) through the client interceptor: acquire() gives it a permit whose perform()
// applies the fault before the call is made. Before, the call reached the server and its real status counted.

type CatalogClient = Client & Record<string, Function>;

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

// The latency tests fault only their first calls (a rate the fault applies to in order) and then make a call the
// fault spares, on the same channel, and wait for it: had a delayed call been made, the server would have it by then.

describe('withCircuitBreaker() on a grpc-js client, with an injected fault', () => {
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

  it('fails a unary call with UNAVAILABLE, counts the failure once, and reaches no server', async () => {
    const fault = breaker.injectFault({ fail: true });

    const { error } = await unary(client, 'lookup');

    expect([error!.code, error!.details]).toEqual([
      status.UNAVAILABLE,
      'Circuit breaker "catalog": injected failure (fault injection); the dependency was not called.',
    ]);
    expect([upstream.received.length, fault.injected]).toEqual([0, 1]);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 1, failures: { total: 1 } });
  });

  it('fails an overload with UNAVAILABLE and grpc-retry-pushback-ms, counted as an overload', async () => {
    breaker.injectFault({ overload: { retryAfterMs: 1_500 } });

    const { error } = await unary(client, 'lookup');

    expect(error!.code).toBe(status.UNAVAILABLE);
    expect(error!.metadata.get('grpc-retry-pushback-ms')).toEqual(['1500']);
    expect(upstream.received.length).toBe(0);
    expect(breaker.snapshot().totals).toMatchObject({ overloads: 1, failures: { total: 0 } });
  });

  it('fails an overload without a pause with RESOURCE_EXHAUSTED', async () => {
    breaker.injectFault({ overload: {} });

    const { error } = await unary(client, 'lookup');

    expect([error!.code, error!.metadata.getMap()]).toEqual([status.RESOURCE_EXHAUSTED, {}]);
    expect([upstream.received.length, breaker.snapshot().totals.overloads]).toEqual([0, 1]);
  });

  it("ends a user's error with its gRPC code, else UNKNOWN", async () => {
    const own = Object.assign(new Error('own'), { code: status.DATA_LOSS, details: 'lost' });
    const fault = breaker.injectFault({ fail: own });
    const first = await unary(client, 'lookup');
    fault.remove();
    breaker.injectFault({ fail: new Error('plain') });
    const second = await unary(client, 'lookup');

    expect([first.error!.code, first.error!.details]).toEqual([status.DATA_LOSS, 'lost']);
    expect([second.error!.code, second.error!.details]).toEqual([status.UNKNOWN, 'plain']);
    expect([upstream.received.length, breaker.snapshot().totals.failures.total]).toEqual([0, 2]);
  });

  it('fails a server stream with UNAVAILABLE before any message, and reaches no server', async () => {
    upstream.stream = { messages: [{ n: 1 }], end: { value: null } };
    breaker.injectFault({ fail: true });

    const { messages, status: end } = await readStream(client);

    expect([messages, end.code, upstream.received.length]).toEqual([[], status.UNAVAILABLE, 0]);
    expect(breaker.snapshot().totals.failures.total).toBe(1);
  });

  it("makes a unary call after the fault's latency, on the breaker's clock, with the request sent meanwhile", async () => {
    breaker.injectFault({ latencyMs: 500, rate: 0.5 });

    const answer = unary(client, 'lookup', { sku: 'a-1' });
    await tick();
    clock.advance(499);
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    expect(upstream.received).toEqual(['/shop.Catalog/Price']);
    clock.advance(1);

    expect(await answer).toEqual({ value: { ok: true } });
    expect([upstream.received, breaker.snapshot().totals.successes]).toEqual([
      ['/shop.Catalog/Price', '/shop.Catalog/Lookup'],
      2,
    ]);
  });

  it("streams after the fault's latency: the read started meanwhile is replayed", async () => {
    upstream.stream = { messages: [{ n: 1 }, { n: 2 }], end: { value: null } };
    breaker.injectFault({ latencyMs: 300, rate: 0.5 });

    const reading = readStream(client);
    await tick();
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    expect(upstream.received).toEqual(['/shop.Catalog/Price']);
    clock.advance(300);
    const { messages, status: end } = await reading;

    expect([messages, end.code, upstream.received]).toEqual([
      [{ n: 1 }, { n: 2 }],
      status.OK,
      ['/shop.Catalog/Price', '/shop.Catalog/Watch'],
    ]);
    expect(breaker.snapshot().totals.successes).toBe(2);
  });

  it("ends a call cancelled during the latency with the caller's status, releases it, and never makes it", async () => {
    breaker.injectFault({ latencyMs: 500, rate: 0.5 });

    const { call, outcome } = startUnary(client, 'lookup');
    await tick();
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    call.cancel();
    const { error } = await outcome;
    clock.advance(500);
    await tick();

    expect(error!.code).toBe(status.CANCELLED);
    expect(upstream.received).toEqual(['/shop.Catalog/Price']);
    expect(breaker.snapshot().totals).toMatchObject({
      ignored: 1,
      successes: 1,
      failures: { total: 0 },
      timeouts: 0,
    });
  });

  it("ends a latency past the breaker's deadline with DEADLINE_EXCEEDED, and never makes the call", async () => {
    upstream.answers['/shop.Catalog/Lookup'] = 'hang';
    upstream.stream = { messages: [], end: 'hang' };
    breaker.injectFault({ latencyMs: 5_000, rate: 2 / 3 });

    const answer = unary(client, 'lookup');
    const streamed = readStream(client);
    await tick();
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    expect(upstream.received).toEqual(['/shop.Catalog/Price']);
    clock.advance(2_000);
    const [{ error }, stream] = await Promise.all([answer, streamed]);
    clock.advance(3_000);
    await tick();

    expect([error!.code, stream.status.code]).toEqual([
      status.DEADLINE_EXCEEDED,
      status.DEADLINE_EXCEEDED,
    ]);
    expect(error!.details).toMatch(/catalog/);
    expect([upstream.received, breaker.snapshot().totals.timeouts]).toEqual([
      ['/shop.Catalog/Price'],
      2,
    ]);
  });
});
