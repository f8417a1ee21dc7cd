import { connectivityState, status, type Client } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, CallTimeoutError, FAMILY_DEFAULT_KEY } from '../../lib/index.js';
import { GrpcStatusError, withCircuitBreaker } from '../../lib/grpc/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import { CatalogUpstream, readStream, startUnary, unary } from './grpc-upstream.js';

type CatalogClient = Client & Record<string, Function>;

describe('withCircuitBreaker() on a grpc-js client, against a real server', () => {
  let upstream: CatalogUpstream;
  let clock: ManualClock;
  const clients: CatalogClient[] = [];
  const clientOf = (
    breaker: Breaker,
    more: Partial<Parameters<typeof withCircuitBreaker>[0]> = {},
  ) => {
    const client = upstream.client({ interceptors: [withCircuitBreaker({ breaker, ...more })] });
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    upstream = await new CatalogUpstream().start();
    clock = new ManualClock();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await upstream.stop();
  });

  it('counts a failure, then refuses calls without reaching the channel: UNAVAILABLE with the rejection in metadata', async () => {
    const breaker = new Breaker(
      'catalog',
      { consecutiveFailures: 1, openDurationMs: 30_000 },
      { clock },
    );
    upstream.answer = { code: status.UNAVAILABLE, details: 'down' };
    const first = await unary(clientOf(breaker), 'lookup');
    expect(first.error).toMatchObject({ code: status.UNAVAILABLE, details: 'down' });
    expect(breaker.state).toBe('open');

    // A client that never called before: the refused call leaves its channel idle (no connection at all).
    const fresh = clientOf(breaker);
    const refused = await unary(fresh, 'lookup');
    expect(refused.error).toMatchObject({
      code: status.UNAVAILABLE,
      details: 'Circuit breaker "catalog" rejected the call: the circuit is open.',
    });
    expect(refused.error!.metadata.getMap()).toEqual({
      'circuit-breaker-code': 'CIRCUIT_OPEN',
      'circuit-breaker-reason': 'open',
      'retry-after-ms': '30000',
    });
    expect(fresh.getChannel().getConnectivityState(false)).toBe(connectivityState.IDLE);
    expect(upstream.received).toEqual(['/shop.Catalog/Lookup']);
    expect(breaker.snapshot().totals).toMatchObject({ rejected: { total: 1, open: 1 } });
  });

  it('classifies each status by the gRPC status table', async () => {
    const breaker = new Breaker('table', {}, { clock, random: () => 0.999 });
    const client = clientOf(breaker);
    const answers = [
      { value: { ok: true } },
      { code: status.INVALID_ARGUMENT },
      { code: status.NOT_FOUND },
      { code: status.ALREADY_EXISTS },
      { code: status.PERMISSION_DENIED },
      { code: status.FAILED_PRECONDITION },
      { code: status.ABORTED },
      { code: status.OUT_OF_RANGE },
      { code: status.UNAUTHENTICATED },
      { code: status.UNKNOWN },
      { code: status.DEADLINE_EXCEEDED },
      { code: status.UNIMPLEMENTED },
      { code: status.INTERNAL },
      { code: status.UNAVAILABLE },
      { code: status.DATA_LOSS },
      { code: status.CANCELLED },
      { code: status.RESOURCE_EXHAUSTED },
    ] as const;
    for (const answer of answers) {
      upstream.answer = answer;
      await unary(client, 'lookup');
    }
    expect(upstream.received).toHaveLength(17);
    const { totals } = breaker.snapshot();
    expect(totals.successes).toBe(9);
    expect(totals.failures.total).toBe(6);
    expect(totals.ignored).toBe(1);
    expect(totals.overloads).toBe(1);
    expect(breaker.snapshot().lastFailure).toMatchObject({
      category: 'overload',
      name: 'GrpcStatusError',
      message: '/shop.Catalog/Lookup ended with gRPC status 8: RESOURCE_EXHAUSTED',
    });
  });

  it.each([
    ['grpc-retry-pushback-ms', '1500', 1_500],
    ['retry-after-ms', '1500', 1_500],
    ['retry-after', '2', 2_000],
  ])(
    'RESOURCE_EXHAUSTED with %s: %s pauses the breaker, and the pause refuses calls',
    async (header, value, pauseMs) => {
      const breaker = new Breaker('quota', {}, { clock, random: () => 0.999 });
      const client = clientOf(breaker);
      upstream.answer = { code: status.RESOURCE_EXHAUSTED, trailers: { [header]: value } };
      await unary(client, 'lookup');
      expect(breaker.snapshot()).toMatchObject({
        state: 'closed',
        pausedUntil: clock.now() + pauseMs,
      });
      const refused = await unary(client, 'lookup');
      expect(refused.error!.metadata.getMap()).toEqual({
        'circuit-breaker-code': 'CIRCUIT_OPEN',
        'circuit-breaker-reason': 'retry-after',
        'retry-after-ms': String(pauseMs),
      });
      expect(upstream.received).toHaveLength(1);
      clock.advance(pauseMs);
      upstream.answer = { value: 'back' };
      expect(await unary(client, 'lookup')).toEqual({ value: 'back' });
    },
  );

  it.each([
    ['grpc-retry-pushback-ms', '1500', 1_500],
    ['retry-after-ms', '1500', 1_500],
  ])(
    'UNAVAILABLE with %s: %s is overload with that pause, as a 503 with Retry-After',
    async (header, value, pauseMs) => {
      const breaker = new Breaker('shedding', {}, { clock, random: () => 0.999 });
      const seen: unknown[] = [];
      breaker.on('failure', (event) => seen.push(event.category));
      const client = clientOf(breaker);
      upstream.answer = { code: status.UNAVAILABLE, trailers: { [header]: value } };
      await unary(client, 'lookup');
      expect(seen).toEqual(['overload']);
      expect(breaker.snapshot()).toMatchObject({
        state: 'closed',
        pausedUntil: clock.now() + pauseMs,
        totals: { overloads: 1, failures: { total: 0 } },
      });
      expect(await unary(client, 'lookup')).toMatchObject({
        error: { code: status.UNAVAILABLE, details: expect.stringContaining('rejected') },
      });
      expect(upstream.received).toHaveLength(1);
    },
  );

  it('a failure counts in the category its status gives, as an HTTP status does', async () => {
    const breaker = new Breaker('categories', {}, { clock });
    const seen: unknown[] = [];
    breaker.on('failure', (event) => seen.push(event.category));
    const client = clientOf(breaker);
    for (const code of [status.DEADLINE_EXCEEDED, status.UNAVAILABLE, status.INTERNAL]) {
      upstream.answer = { code };
      await unary(client, 'lookup');
    }
    expect(seen).toEqual(['timeout', 'connection', 'server']);
    expect(breaker.snapshot().totals.failures).toMatchObject({
      total: 3,
      timeout: 1,
      connection: 1,
      server: 1,
    });
  });

  it("a remote breaker's UNAVAILABLE that says when to retry is overload: a pause, not a failure", async () => {
    const breaker = new Breaker(
      'remote',
      { consecutiveFailures: 1 },
      { clock, random: () => 0.999 },
    );
    upstream.answer = {
      code: status.UNAVAILABLE,
      trailers: { 'circuit-breaker-code': 'CIRCUIT_OPEN', 'retry-after-ms': '700' },
    };
    await unary(clientOf(breaker), 'lookup');
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', pausedUntil: clock.now() + 700 });
    expect(breaker.snapshot().totals).toMatchObject({ overloads: 1, failures: { total: 0 } });
  });

  it('a failure with a pushback (INTERNAL) opens the breaker for at least that long', async () => {
    const breaker = new Breaker(
      'pushback',
      { consecutiveFailures: 1, openDurationMs: 1_000 },
      { clock },
    );
    upstream.answer = { code: status.INTERNAL, trailers: { 'grpc-retry-pushback-ms': '5000' } };
    await unary(clientOf(breaker), 'lookup');
    expect(breaker.snapshot()).toMatchObject({
      state: 'open',
      openUntil: clock.monotonic() + 5_000,
    });
  });

  it("the breaker's deadline cancels the call: the server sees the cancellation, the caller gets DEADLINE_EXCEEDED", async () => {
    const breaker = new Breaker('slow', { timeoutMs: 250 }, { clock });
    upstream.answer = 'hang';
    const { outcome } = startUnary(clientOf(breaker), 'lookup');
    await upstream.receivedCalls(1);
    clock.advance(250);
    expect((await outcome).error).toMatchObject({
      code: status.DEADLINE_EXCEEDED,
      details: new CallTimeoutError('slow', 250).message,
    });
    await upstream.cancellations(1);
    expect(upstream.cancelled).toEqual(['/shop.Catalog/Lookup']);
    expect(breaker.snapshot().totals.failures).toMatchObject({ total: 1, timeout: 1 });
  });

  it("a call's deadline replaces the breaker's for that call: cancelled at it, counted a timeout", async () => {
    const breaker = new Breaker('deadline', { timeoutMs: 250 }, { clock });
    upstream.answer = 'hang';
    // grpc-js measures deadlines against Date.now(), and so does the interceptor: held still here.
    const now = Date.now();
    const wall = vi.spyOn(Date, 'now').mockReturnValue(now);
    try {
      const { outcome } = startUnary(clientOf(breaker), 'lookup', { deadline: now + 5_000 });
      await upstream.receivedCalls(1);
      clock.advance(4_999);
      expect(upstream.cancelled).toEqual([]);
      clock.advance(1);
      expect((await outcome).error).toMatchObject({
        code: status.DEADLINE_EXCEEDED,
        details: new CallTimeoutError('deadline', 5_000).message,
      });
      await upstream.cancellations(1);
      expect(breaker.snapshot().totals).toMatchObject({
        timeouts: 1,
        failures: { total: 1, timeout: 1 },
      });
    } finally {
      wall.mockRestore();
    }
  });

  it("a call without a deadline, or with Infinity, keeps the breaker's", async () => {
    const breaker = new Breaker('no-deadline', { timeoutMs: 250 }, { clock });
    upstream.answer = 'hang';
    const { outcome } = startUnary(clientOf(breaker), 'lookup', { deadline: Infinity });
    await upstream.receivedCalls(1);
    clock.advance(250);
    expect((await outcome).error).toMatchObject({
      code: status.DEADLINE_EXCEEDED,
      details: new CallTimeoutError('no-deadline', 250).message,
    });
  });

  it("the caller's own cancel is ignored", async () => {
    const breaker = new Breaker('cancel', { timeoutMs: 250 }, { clock });
    upstream.answer = 'hang';
    const { call, outcome } = startUnary(clientOf(breaker), 'lookup');
    await upstream.receivedCalls(1);
    call.cancel();
    expect((await outcome).error).toMatchObject({ code: status.CANCELLED });
    await upstream.cancellations(1);
    clock.advance(1_000);
    expect(breaker.snapshot().totals).toMatchObject({ ignored: 1, failures: { total: 0 } });
  });

  it('a per-key family opens per method by default', async () => {
    const family = new Breaker(
      'methods',
      { consecutiveFailures: 1, perKey: { maxKeys: 10 } },
      { clock },
    );
    const client = clientOf(family);
    upstream.answers['/shop.Catalog/Lookup'] = { code: status.INTERNAL };
    await unary(client, 'lookup');
    expect(await unary(client, 'lookup')).toMatchObject({ error: { code: status.UNAVAILABLE } });
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    expect(upstream.received).toEqual(['/shop.Catalog/Lookup', '/shop.Catalog/Price']);
    expect(family.forKey('/shop.Catalog/Lookup').state).toBe('open');
    expect(family.forKey('/shop.Catalog/Price').state).toBe('closed');
  });

  it('key: one child per service', async () => {
    const family = new Breaker(
      'services',
      { consecutiveFailures: 1, perKey: { maxKeys: 10 } },
      { clock },
    );
    const client = clientOf(family, { key: (request) => request.service });
    upstream.answers['/shop.Catalog/Lookup'] = { code: status.INTERNAL };
    await unary(client, 'lookup');
    expect(await unary(client, 'price')).toMatchObject({ error: { code: status.UNAVAILABLE } });
    expect(upstream.received).toEqual(['/shop.Catalog/Lookup']);
    expect([...family.children()].map((child) => child.snapshot().key)).toEqual(['shop.Catalog']);
  });

  it('skip: the call bypasses the breaker', async () => {
    const breaker = new Breaker('skipped', {}, { clock });
    breaker.isolate();
    const client = clientOf(breaker, { skip: (request) => request.method.endsWith('/Price') });
    expect(await unary(client, 'price')).toEqual({ value: { ok: true } });
    expect(await unary(client, 'lookup')).toMatchObject({ error: { code: status.UNAVAILABLE } });
    expect(upstream.received).toEqual(['/shop.Catalog/Price']);
  });

  it('a key that finds no target puts the call under the default key', async () => {
    const family = new Breaker('tenants', { perKey: { maxKeys: 10 } }, { clock });
    const client = clientOf(family, {
      key: (request) => request.metadata.get('tenant')[0] as string | undefined,
    });
    expect(await unary(client, 'lookup')).toEqual({ value: { ok: true } });
    expect([...family.children()].map((child) => child.snapshot().key)).toEqual([
      FAMILY_DEFAULT_KEY,
    ]);
  });

  it('a skip that throws is reported, and the call goes through the breaker', async () => {
    const reported: Error[] = [];
    const breaker = new Breaker('faulty', {}, { clock, reportError: (e) => reported.push(e) });
    breaker.isolate();
    const client = clientOf(breaker, {
      skip: () => {
        throw new Error('no header');
      },
    });
    expect(await unary(client, 'lookup')).toMatchObject({ error: { code: status.UNAVAILABLE } });
    expect(upstream.received).toEqual([]);
    expect(reported.map((e) => e.message)).toEqual([
      `Circuit breaker "faulty" in withCircuitBreaker(): option "skip" threw Error: no header; the call went through the breaker. Make the skip function return true or false. Later faults of this site's skip function are not reported again.`,
    ]);
  });

  it('after the open period, a probe goes to the server and its OK closes the breaker', async () => {
    const breaker = new Breaker(
      'recovers',
      { consecutiveFailures: 1, openDurationMs: 1_000, halfOpen: { maxProbes: 1 } },
      { clock, random: () => 0.5 },
    );
    const client = clientOf(breaker);
    upstream.answer = { code: status.UNAVAILABLE };
    await unary(client, 'lookup');
    expect(breaker.state).toBe('open');
    clock.advance(1_000);
    upstream.answer = { value: 'back' };
    expect(await unary(client, 'lookup')).toEqual({ value: 'back' });
    expect(breaker.state).toBe('closed');
    expect(upstream.received).toHaveLength(2);
  });

  it('a full bulkhead refuses the call with BULKHEAD_FULL, and the slot comes back when a call ends', async () => {
    const breaker = new Breaker('capped', { bulkhead: { maxConcurrent: 1 } }, { clock });
    const client = clientOf(breaker);
    upstream.answer = 'hang';
    const first = startUnary(client, 'lookup');
    await upstream.receivedCalls(1);
    const refused = await unary(client, 'lookup');
    expect(refused.error).toMatchObject({ code: status.UNAVAILABLE });
    expect(refused.error!.metadata.getMap()).toEqual({
      'circuit-breaker-code': 'BULKHEAD_FULL',
      'circuit-breaker-reason': 'bulkhead-full',
    });
    first.call.cancel();
    await first.outcome;
    upstream.answer = { value: 'next' };
    expect(await unary(client, 'lookup')).toEqual({ value: 'next' });
    expect(upstream.received).toHaveLength(2);
  });

  it('works as a call option, for one call', async () => {
    const breaker = new Breaker('per-call', {}, { clock });
    breaker.isolate();
    const client = upstream.client();
    clients.push(client);
    const interceptors = [withCircuitBreaker({ breaker })];
    expect(await unary(client, 'lookup', {}, { interceptors })).toMatchObject({
      error: { code: status.UNAVAILABLE },
    });
    expect(await unary(client, 'lookup')).toEqual({ value: { ok: true } });
    expect(upstream.received).toEqual(['/shop.Catalog/Lookup']);
  });

  describe('server streaming: settled at the status', () => {
    it('a stream that ends OK is a success; one that ends UNAVAILABLE a failure', async () => {
      const breaker = new Breaker('stream', {}, { clock });
      const client = clientOf(breaker);
      upstream.stream = { messages: [1, 2], end: { value: null } };
      expect(await readStream(client)).toMatchObject({
        messages: [1, 2],
        status: { code: status.OK },
      });
      upstream.stream = { messages: [3], end: { code: status.UNAVAILABLE } };
      expect(await readStream(client)).toMatchObject({
        messages: [3],
        status: { code: status.UNAVAILABLE },
      });
      expect(breaker.snapshot().totals).toMatchObject({ successes: 1, failures: { total: 1 } });
    });

    it('a refused stream gets its status and no message; a hung one is cancelled at the deadline', async () => {
      const breaker = new Breaker('stream', { timeoutMs: 500, consecutiveFailures: 1 }, { clock });
      const client = clientOf(breaker);
      upstream.stream = { messages: [1], end: 'hang' };
      let firstMessage!: () => void;
      const received = new Promise<void>((resolve) => (firstMessage = resolve));
      const hung = readStream(client, firstMessage);
      await received;
      clock.advance(500);
      expect(await hung).toMatchObject({
        messages: [1],
        status: { code: status.DEADLINE_EXCEEDED },
      });
      await upstream.cancellations(1);
      expect(await readStream(client)).toMatchObject({
        messages: [],
        status: { code: status.UNAVAILABLE },
        error: { code: status.UNAVAILABLE },
      });
      expect(upstream.received).toHaveLength(1);
    });
  });

  it('GrpcStatusError is what the breaker counts', async () => {
    const breaker = new Breaker('errors', {}, { clock });
    const seen: unknown[] = [];
    breaker.on('failure', (event) => seen.push(event.error));
    upstream.answer = {
      code: status.INTERNAL,
      details: 'boom',
      trailers: { 'retry-after-ms': '40' },
    };
    await unary(clientOf(breaker), 'lookup');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(GrpcStatusError);
    expect(seen[0]).toMatchObject({
      method: '/shop.Catalog/Lookup',
      code: status.INTERNAL,
      details: 'boom',
      retryAfterMs: 40,
    });
    expect(seen[0]).not.toHaveProperty('status');
  });

  it('an overload is counted from the status table, without an HTTP status on the error', async () => {
    const breaker = new Breaker('overload-error', {}, { clock, random: () => 0.999 });
    const seen: unknown[] = [];
    breaker.on('failure', (event) => seen.push([event.category, event.error]));
    upstream.answer = { code: status.RESOURCE_EXHAUSTED, trailers: { 'retry-after-ms': '700' } };
    await unary(clientOf(breaker), 'lookup');
    expect(seen).toHaveLength(1);
    const [category, error] = seen[0] as [string, GrpcStatusError];
    expect(category).toBe('overload');
    expect(error).toMatchObject({ code: status.RESOURCE_EXHAUSTED, retryAfterMs: 700 });
    expect(error).not.toHaveProperty('status');
    expect(breaker.snapshot().pausedUntil).toBe(clock.now() + 700);
  });
});

describe('withCircuitBreaker() options', () => {
  it('refuses what is not a breaker, non-function hooks, and a key without a family', () => {
    expect(() => withCircuitBreaker({ breaker: {} as Breaker })).toThrow(
      `withCircuitBreaker(): option "breaker" must be a Breaker (a plain breaker, or a per-key family built with "perKey"), got an object. Pass registry.get(name) or a breaker you built.`,
    );
    const breaker = new Breaker('plain');
    expect(() => withCircuitBreaker({ breaker, skip: 'yes' as never })).toThrow(
      `Circuit breaker "plain" in withCircuitBreaker(): option "skip" must be a function of the request, got "yes". Pass a function, or leave the option out.`,
    );
    expect(() => withCircuitBreaker({ breaker, key: (request) => request.service })).toThrow(
      `Circuit breaker "plain" in withCircuitBreaker(): option "key" needs a per-key family, but this breaker has no "perKey" option, so every call shares it. Build the breaker with "perKey: { maxKeys }", or leave "key" out.`,
    );
  });
});
