import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CircuitBreakerRegistry } from 'nestjs-circuit-breaker';
import {
  CircuitBreakerTester,
  CircuitBreakerTestingModule,
  type ManualClock,
} from 'nestjs-circuit-breaker/testing';
import { startSample, type RunningSample } from '../src/bootstrap.js';
import { CIRCUIT_BREAKER_ASYNC_OPTIONS } from '../src/breakers/circuit-breaker.config.js';

let sample: RunningSample;
let breakers: CircuitBreakerTester;
let clock: ManualClock;

/** The sample as it runs, with its own breaker options; the testing module puts them on a manual clock. */
function startOnManualClock() {
  return startSample({
    logger: false,
    breakers: CircuitBreakerTestingModule.forRootAsync(CIRCUIT_BREAKER_ASYNC_OPTIONS),
  });
}

beforeEach(async () => {
  sample = await startOnManualClock();
  breakers = sample.app.get(CircuitBreakerTester);
  clock = breakers.clock;
});
afterEach(async () => {
  await sample?.close();
});

async function get(path: string) {
  const response = await fetch(`${sample.url}${path}`);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}

const closedDetails = (since: number) => ({
  state: 'closed',
  since,
  failureRate: 0,
  callsInWindow: 0,
});

describe('the sample application over real HTTP', () => {
  it('readiness goes 200 → 503 → 200 across an outage, with the exact terminus bodies for up, down and degraded', async () => {
    const since = clock.now();
    const up = await get('/health/ready');
    expect(up.status).toBe(200);
    const healthy = {
      circuit_breakers: {
        status: 'up',
        total: 4,
        open: 0,
        halfOpen: 0,
        breakers: {
          catalog: closedDetails(since),
          'catalog.search': closedDetails(since),
          pricing: closedDetails(since),
          inventory: { ...closedDetails(since), unhealthyKeys: 0 },
        },
      },
    };
    expect(up.body).toEqual({ status: 'ok', info: healthy, error: {}, details: healthy });

    sample.upstreams.primary.setBehaviour({ mode: 'failing' });
    for (let i = 0; i < 4; i++) expect((await get('/catalog/search?q=cup')).body).toEqual([]); // fallback: no results
    const registry = sample.app.get(CircuitBreakerRegistry);
    const openUntil = registry.get('catalog.search').snapshot().openUntil!;
    // ensureOk() threw it: the status is kept, the URL has no query.
    const primaryFailure = {
      category: 'server',
      name: 'UpstreamHttpError',
      status: 500,
      message: `Upstream ${sample.upstreams.primary.url}/search answered 500 Internal Server Error.`,
    };
    const down = await get('/health/ready');
    expect(down.status).toBe(503);
    const failing = {
      circuit_breakers: {
        status: 'down',
        total: 4,
        open: 1,
        halfOpen: 0,
        breakers: {
          catalog: closedDetails(since),
          'catalog.search': {
            state: 'open',
            since,
            retryAfterMs: openUntil - clock.now(),
            failureRate: 0,
            callsInWindow: 0,
            // The window starts empty once open; why it opened stays.
            lastTransition: {
              from: 'closed',
              to: 'open',
              reason: 'failure-rate',
              at: since,
              window: { calls: 4, failures: 4, slowCalls: 0, failureRate: 1 },
            },
            lastFailure: primaryFailure,
          },
          pricing: closedDetails(since),
          inventory: { ...closedDetails(since), unhealthyKeys: 0 },
        },
      },
    };
    expect(down.body).toEqual({ status: 'error', info: {}, error: failing, details: failing });

    clock.advance(openUntil - clock.now());
    const degraded = await get('/health/ready');
    expect(degraded.status).toBe(200);
    const probing = {
      circuit_breakers: {
        status: 'degraded',
        total: 4,
        open: 0,
        halfOpen: 1,
        breakers: {
          catalog: closedDetails(since),
          'catalog.search': {
            state: 'half-open',
            since: openUntil,
            failureRate: 0,
            callsInWindow: 0,
            lastTransition: {
              from: 'open',
              to: 'half-open',
              reason: 'open-duration-elapsed',
              at: openUntil,
            },
            lastFailure: primaryFailure,
          },
          pricing: closedDetails(since),
          inventory: { ...closedDetails(since), unhealthyKeys: 0 },
        },
      },
    };
    expect(degraded.body).toEqual({
      status: 'degraded',
      info: probing,
      error: {},
      details: probing,
    });

    sample.upstreams.primary.setBehaviour({ mode: 'healthy' });
    expect((await get('/catalog/search?q=cup')).body).toEqual([
      { id: '1', name: 'Espresso cup', price: 12 },
    ]);
    const recovered = await get('/health/ready');
    expect(recovered.status).toBe(200);
    expect(recovered.body.status).toBe('ok');
    expect(breakers.history('catalog.search')).toEqual([
      { from: 'closed', to: 'open', reason: 'failure-rate', at: since },
      { from: 'open', to: 'half-open', reason: 'open-duration-elapsed', at: openUntil },
      { from: 'half-open', to: 'closed', reason: 'probes-succeeded', at: openUntil },
    ]);
  });

  it('the public health endpoint hides breaker names and failure rates', async () => {
    // Open, not forced: isolate() is force('open'), which the health check counts as forced (up).
    const pricing = sample.app.get(CircuitBreakerRegistry).get('pricing');
    pricing.adoptOpen(pricing.clock.now() + 60_000);
    const response = await get('/health/public');
    expect(response.status).toBe(503);
    expect(response.body).toEqual({
      status: 'error',
      info: {},
      error: { circuit_breakers: { status: 'down', total: 4, open: 1, halfOpen: 0 } },
      details: { circuit_breakers: { status: 'down', total: 4, open: 1, halfOpen: 0 } },
    });
    expect((await get('/health/live')).status).toBe(200);
  });

  it('an open breaker answers 503 with Retry-After through the exception filter, and the upstream sees no traffic', async () => {
    sample.upstreams.primary.setBehaviour({ mode: 'failing' });
    // The upstream's 500 is a dependency failure, not the client's: 502 (sample/src/upstream/upstream-http-error.filter.ts).
    for (let i = 0; i < 4; i++)
      expect(await get('/catalog/products/3')).toMatchObject({
        status: 502,
        body: { statusCode: 502, error: 'Bad Gateway', message: 'A dependency failed.' },
      });
    const before = sample.upstreams.primary.requests;
    const rejected = await get('/catalog/products/3');
    expect(sample.upstreams.primary.requests).toBe(before);
    expect(rejected.status).toBe(503);
    const retryAfterMs = sample.app
      .get(CircuitBreakerRegistry)
      .get('catalog')
      .snapshot().retryAfterMs!;
    expect(rejected.headers.get('retry-after')).toBe(String(Math.ceil(retryAfterMs / 1000)));
    // Public bodies: the breaker's name is internal architecture (httpFilter: { details: true } would show it).
    expect(rejected.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'A dependency is unavailable; retry later.',
    });
  });

  it('@RequireCircuitBreaker on the checkout fan-out answers before any work over HTTP and over TCP, counting nothing', async () => {
    const client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: sample.rpcPort },
    });
    try {
      expect((await get('/checkout/1')).status).toBe(200);
      expect(await firstValueFrom(client.send('checkout.quote', '1'))).toMatchObject({
        product: { id: '1' },
      });
      const pricing = sample.app.get(CircuitBreakerRegistry).get('pricing');
      pricing.force('open', { reason: 'pricing maintenance', untilMs: clock.now() + 5_000 });
      const before = sample.upstreams.primary.requests;
      const totals = pricing.snapshot().totals;
      const rejected = await get('/checkout/1');
      expect([rejected.status, rejected.headers.get('retry-after')]).toEqual([503, '5']);
      const error = await firstValueFrom(client.send('checkout.quote', '1')).catch(
        (caught: unknown) => caught,
      );
      expect(error).toEqual({
        status: 'error',
        code: 'CIRCUIT_OPEN',
        message: 'A dependency is unavailable; retry later.',
        retryAfterMs: 5_000,
      });
      // Neither the catalog nor pricing was called, and the guard counted nothing.
      expect(sample.upstreams.primary.requests).toBe(before);
      expect(pricing.snapshot().totals).toEqual(totals);
    } finally {
      await client.close();
    }
  });

  it('4xx answers from the upstream never open the breaker', async () => {
    for (let i = 0; i < 10; i++) {
      const response = await get('/catalog/products/bad');
      expect(response.status).toBe(400);
      expect(response.body.message).toBe('product ids are digits');
    }
    for (let i = 0; i < 5; i++) expect((await get('/catalog/products/404')).status).toBe(404);
    const snapshot = sample.app.get(CircuitBreakerRegistry).get('catalog').snapshot();
    expect(snapshot.state).toBe('closed');
    expect(snapshot.totals).toMatchObject({ successes: 15, failures: { total: 0 } });
  });

  it('a 429 with Retry-After from the catalog over fetch pauses the catalog without opening it: ensureOk() keeps the status and Retry-After', async () => {
    sample.upstreams.primary.setBehaviour({ mode: 'overloaded', retryAfterSeconds: 4 });
    const overloaded = await get('/catalog/products/2');
    expect(overloaded.status).toBe(503);
    expect(overloaded.headers.get('retry-after')).toBe('4');
    expect(overloaded.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'A dependency is overloaded; retry later.',
    });
    const before = sample.upstreams.primary.requests;
    const paused = await get('/catalog/products/2');
    expect(paused.status).toBe(503);
    expect(paused.headers.get('retry-after')).toBe('4');
    expect(sample.upstreams.primary.requests).toBe(before);
    const snapshot = sample.app.get(CircuitBreakerRegistry).get('catalog').snapshot();
    expect(snapshot.state).toBe('closed');
    expect(snapshot.totals).toMatchObject({ overloads: 1, failures: { total: 0 } });
  });

  it('a 429 with Retry-After pauses pricing without opening it: HttpService sends nothing while paused', async () => {
    sample.upstreams.primary.setBehaviour({ mode: 'overloaded', retryAfterSeconds: 3 });
    expect((await get('/pricing/1')).status).toBe(429);
    const before = sample.upstreams.primary.requests;
    const paused = await get('/pricing/1');
    expect(sample.upstreams.primary.requests).toBe(before);
    expect(paused.status).toBe(503);
    expect(paused.headers.get('retry-after')).toBe('3');
    expect(paused.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'A dependency is unavailable; retry later.',
    });
    expect(sample.app.get(CircuitBreakerRegistry).get('pricing').state).toBe('closed');
    clock.advance(3_000);
    sample.upstreams.primary.setBehaviour({ mode: 'healthy' });
    expect((await get('/pricing/1')).body).toEqual({ id: '1', price: 12, currency: 'EUR' });
  });

  it('a hung upstream is cut by the timeout (504) when the manual clock passes the deadline, and only that warehouse is affected', async () => {
    sample.upstreams.warehouses.a.setBehaviour({ mode: 'hanging' });
    const pending = get('/inventory/a/7');
    // The call waits on its 800 ms deadline, which runs on the manual clock.
    await clock.whenTimerPending();
    clock.advance(800);
    const cut = await pending;
    expect(cut.status).toBe(504);
    expect(cut.body).toEqual({
      statusCode: 504,
      error: 'Gateway Timeout',
      message: 'A dependency did not answer in time; retry later.',
    });
    // One child per origin: the dispatcher keys each request by its warehouse's protocol//host:port.
    const warehouseA = sample.upstreams.warehouses.a.url;
    expect(breakers.breaker('inventory', { key: warehouseA }).snapshot().totals.timeouts).toBe(1);
    expect((await get('/inventory/b/7')).body).toEqual({
      sku: '7',
      available: 7,
      warehouse: 'warehouse-b',
    });
  });

  it("fetch through the warehouses' dispatcher: a 500 counts on that warehouse's child, and once it is open a request never reaches the warehouse", async () => {
    const { a, b } = sample.upstreams.warehouses;
    a.setBehaviour({ mode: 'failing' });
    // A failure of the warehouse is the dependency's, not the client's: 502 (ensureOk() after the breaker).
    expect((await get('/inventory/a/7')).status).toBe(502);
    expect((await get('/inventory/a/7')).status).toBe(502);
    const child = breakers.breaker('inventory', { key: a.url });
    expect(child.state).toBe('open');
    const before = a.requests;
    const refused = await get('/inventory/a/7');
    expect(a.requests).toBe(before);
    // The refusal is fetch's TypeError's cause: the module's filter looks through it and answers.
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([
      503,
      String(Math.ceil(child.snapshot().retryAfterMs! / 1000)),
    ]);
    expect(breakers.breaker('inventory', { key: b.url }).state).toBe('closed');
    expect((await get('/inventory/b/7')).status).toBe(200);
    expect(breakers.breaker('inventory').snapshot().family).toMatchObject({
      keys: 2,
      unhealthyKeys: 1,
    });
  });

  it('a game day without touching the upstream: injected failures serve the last good answer, the search fallback and a 503 readiness, and removing them restores everything', async () => {
    expect((await get('/catalog/products/1')).status).toBe(200);
    const before = sample.upstreams.primary.requests;
    const catalog = breakers.inject('catalog', { fail: true });
    const search = breakers.inject('catalog.search', { fail: true });
    expect(await get('/catalog/products/1')).toMatchObject({
      status: 200,
      body: { id: '1', name: 'Espresso cup', price: 12 },
    });
    for (let i = 0; i < 4; i++) expect((await get('/catalog/search?q=cup')).body).toEqual([]);
    await breakers.waitFor('catalog.search', 'open');
    expect((await get('/health/ready')).status).toBe(503);
    expect(sample.upstreams.primary.requests).toBe(before);
    expect([catalog.injected, search.injected]).toEqual([1, 4]);
    breakers.restore();
    // The open duration has jitter (0.1): wait out what the breaker says is left.
    clock.advance(breakers.breaker('catalog.search').snapshot().retryAfterMs!);
    expect((await get('/catalog/search?q=cup')).body).toEqual([
      { id: '1', name: 'Espresso cup', price: 12 },
    ]);
    expect(breakers.state('catalog.search')).toBe('closed');
    expect((await get('/health/ready')).status).toBe(200);
  });

  it('an injected overload on pricing (its HttpService) pauses it: 503 with Retry-After, no request sent', async () => {
    const before = sample.upstreams.primary.requests;
    breakers.inject('pricing', { overload: { retryAfterMs: 3_000 } });
    // PricingService maps only axios errors to their status: the injected 429 reaches Nest's default filter (500).
    const refused = await get('/pricing/1');
    expect(sample.upstreams.primary.requests).toBe(before);
    breakers.restore();
    const paused = await get('/pricing/1');
    expect([refused.status, paused.status, paused.headers.get('retry-after')]).toEqual([
      500,
      503,
      '3',
    ]);
    clock.advance(3_000);
    expect((await get('/pricing/1')).body).toEqual({ id: '1', price: 12, currency: 'EUR' });
  });

  it('GET /breakers returns the registry snapshot', async () => {
    await get('/catalog/products/1');
    const response = await get('/breakers');
    expect(response.body.map((s: { name: string; state: string }) => [s.name, s.state])).toEqual([
      ['catalog', 'closed'],
      ['catalog.search', 'closed'],
      ['pricing', 'closed'],
      ['inventory', 'closed'],
    ]);
    expect(response.body[0].totals).toMatchObject({ admitted: 1, successes: 1 });
  });
});

describe('the game-day endpoints', () => {
  async function send(method: string, path: string, body?: unknown) {
    const response = await fetch(`${sample.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  }

  it('POST /breakers/:name/faults injects a fault over HTTP, shown in the snapshot, and DELETE removes it', async () => {
    const before = sample.upstreams.primary.requests;
    expect(
      await send('POST', '/breakers/catalog.search/faults', { fail: true, rate: 0.5 }),
    ).toEqual({
      status: 201,
      body: { fail: true, latencyMs: 0, rate: 0.5, drawn: false, injected: 0 },
    });
    expect((await get('/catalog/search?q=cup')).body).toEqual([]);
    expect((await get('/catalog/search?q=cup')).body).toEqual([
      { id: '1', name: 'Espresso cup', price: 12 },
    ]);
    expect(sample.upstreams.primary.requests).toBe(before + 1);
    expect((await get('/breakers/catalog.search')).body.injectedFault.injected).toBe(1);
    expect(await send('DELETE', '/breakers/catalog.search/faults')).toEqual({
      status: 204,
      body: undefined,
    });
    expect((await get('/breakers/catalog.search')).body.injectedFault).toBeUndefined();
    expect(await send('POST', '/breakers/catalog/faults', { fail: true, rate: 2 })).toEqual({
      status: 400,
      body: {
        statusCode: 400,
        error: 'Bad Request',
        message:
          'Circuit breaker "catalog": injectFault() option "rate" must be a number in (0, 1], got 2. Fix it, or leave it out.',
      },
    });
  });

  it('without GAME_DAY=true, the application refuses to inject, saying how to allow it', async () => {
    await sample.close();
    sample = await startSample({ logger: false });
    const refused = await send('POST', '/breakers/catalog/faults', { fail: true });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(
      /^Circuit breaker "catalog": fault injection is off, so injectFault\(\) is refused/,
    );
  });
});

describe('the sample reads its breaker options through @nestjs/config', () => {
  const VARIABLES = ['CB_CATALOG_TIMEOUT_MS', 'CB_DEFAULTS_OPEN_DURATION_MS', 'CB_CATALOG_TIMEOUT'];
  afterEach(() => {
    for (const name of VARIABLES) delete process.env[name];
  });

  it("CB_* variables override the sample's options, over its defaults", async () => {
    await sample.close();
    process.env.CB_CATALOG_TIMEOUT_MS = '1500';
    process.env.CB_DEFAULTS_OPEN_DURATION_MS = '5000';
    sample = await startOnManualClock();
    const tester = sample.app.get(CircuitBreakerTester);
    tester.expectOptions('catalog', {
      timeoutMs: 1_500,
      openDurationMs: 5_000,
      window: { type: 'count', size: 10 },
      minimumThroughput: 4,
    });
    tester.expectOptions('pricing', { timeoutMs: 2_000, openDurationMs: 5_000, jitter: 0.1 });
  });

  it('a mistyped variable fails start-up, naming it and the one it may have meant', async () => {
    await sample.close();
    process.env.CB_CATALOG_TIMEOUT = '1500';
    await expect(startOnManualClock()).rejects.toThrow(
      'Environment variable CB_CATALOG_TIMEOUT starts with CB_ but names no breaker option this application reads. Did you mean CB_CATALOG_TIMEOUT_MS?',
    );
    // Nothing started is left behind: the next test starts its own.
    sample = undefined as never;
  });
});

describe('the sample shuts down cleanly', () => {
  it('leaves no server, socket or timer behind after close(), even with a call hung on a deadline', async () => {
    const count = (kind: string) =>
      process.getActiveResourcesInfo().filter((r) => r === kind).length;
    const before = {
      servers: count('TCPServerWrap'),
      sockets: count('TCPSocketWrap'),
      timers: count('Timeout'),
    };
    const own = await startSample({ logger: false });
    own.upstreams.warehouses.a.setBehaviour({ mode: 'hanging' });
    const pending = fetch(`${own.url}/inventory/a/1`).then(
      (r) => r.status,
      () => 'closed',
    );
    // Wait until the warehouse really holds the request, so that close() meets a hung call.
    const warehouse = own.upstreams.warehouses.a;
    for (let waited = 0; warehouse.requests === 0; waited += 10) {
      if (waited > 5_000) throw new Error('the hung request never reached the warehouse');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const closing = Date.now();
    await own.close();
    // Far below the 800 ms deadline of the hung call: close() did not wait for it.
    expect(Date.now() - closing).toBeLessThan(700);
    expect(await pending).toBe('closed');
    expect(count('TCPServerWrap')).toBeLessThanOrEqual(before.servers);
    expect(count('Timeout')).toBeLessThanOrEqual(before.timers);
  });
});
