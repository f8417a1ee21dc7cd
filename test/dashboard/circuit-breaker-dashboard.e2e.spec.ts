import type { CanActivate, ExecutionContext, INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  ConcurrencyLimiter,
  type BreakerOptions,
  type LimitPermit,
} from '../../lib/index.js';
import {
  CircuitBreakerDashboardModule,
  CircuitBreakerDashboardService,
  type CircuitBreakerDashboardOptions,
  type DashboardState,
  type DashboardTransitions,
} from '../../lib/dashboard/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { openStream, type SseClient } from './sse-client.js';

const PLATFORMS = ['express', 'fastify'] as const;
type Platform = (typeof PLATFORMS)[number];

const PAYMENTS: BreakerOptions = {
  window: { type: 'count', size: 4 },
  minimumThroughput: 2,
  failureRateThreshold: 0.5,
  openDurationMs: 5_000,
};

const apps: INestApplication[] = [];
const clients: SseClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const app of apps.splice(0)) await app.close();
});

async function start(
  platform: Platform,
  dashboard: CircuitBreakerDashboardOptions,
  breakers: Record<string, BreakerOptions> = { payments: PAYMENTS },
  clock = new ManualClock(),
) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      CircuitBreakerModule.forRoot({ clock, breakers }),
      CircuitBreakerDashboardModule.forRoot(dashboard),
    ],
  }).compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger: false })
      : moduleRef.createNestApplication({ logger: false });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { app, url, clock, registry: app.get(CircuitBreakerRegistry) };
}

async function stream(url: string, headers?: Record<string, string>) {
  const client = await openStream(url, headers);
  clients.push(client);
  return client;
}

const fail = () => Promise.reject(new Error('payments are down'));

describe.each(PLATFORMS)('the dashboard on %s', (platform) => {
  it('serves one self-contained page: no external resource, a CSP that allows only its own script and style, no token without control', async () => {
    const { url } = await start(platform, {});
    const response = await fetch(`${url}/circuit-breakers`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toMatch(
      /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]{44}'; style-src 'sha256-[A-Za-z0-9+/=]{44}'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
    );
    const html = await response.text();
    expect(html).not.toMatch(/(?:src|href)="(?!data:)/);
    expect(html).not.toContain('http://');
    expect(html).not.toContain('https://');
    const config = JSON.parse(
      /<script type="application\/json" id="cb-config">(.*?)<\/script>/.exec(html)![1]!,
    );
    expect(config).toEqual({
      control: false,
      token: '',
      intervalMs: 1_000,
      header: 'x-circuit-breaker-dashboard',
    });
    expect(html).not.toContain('data-action');
  });

  it('streams the state at once, every transition as it happens, then a snapshot every intervalMs', async () => {
    const { url, registry, clock } = await start(platform, { intervalMs: 100 });
    const client = await stream(`${url}/circuit-breakers/stream`);
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    const first = await client.next((event) => event.type === 'snapshot');
    expect(first.retry).toBe(2_000);
    const state = JSON.parse(first.data) as DashboardState;
    expect(state.at).toBe(clock.now());
    expect(state.breakers.map((view) => [view.snapshot.name, view.snapshot.state])).toEqual([
      ['payments', 'closed'],
    ]);
    expect(state.fleet).toBeUndefined();

    const payments = registry.get('payments');
    await payments.execute(fail).catch(() => undefined);
    await payments.execute(fail).catch(() => undefined);
    const seen = client.events.length;
    const pushed = await client.next((event) => event.type === 'transitions', 0);
    const update = JSON.parse(pushed.data) as DashboardTransitions;
    expect(update.transitions).toEqual([
      { breaker: 'payments', from: 'closed', to: 'open', reason: 'failure-rate', at: clock.now() },
    ]);
    expect(update.omitted).toBe(0);
    expect(update.breakers[0]!.snapshot).toMatchObject({
      name: 'payments',
      state: 'open',
      retryAfterMs: 5_000,
      lastTransition: { from: 'closed', to: 'open', window: { calls: 2, failures: 2 } },
      lastFailure: { category: 'other', name: 'Error', message: 'payments are down' },
    });
    const tick = await client.next((event) => event.type === 'snapshot', seen);
    expect((JSON.parse(tick.data) as DashboardState).breakers[0]!.snapshot.state).toBe('open');
  });

  it('answers <path>/state with every concurrency limiter, and no limiters field without any', async () => {
    const { url, registry, clock } = await start(platform, { path: '/ops' });
    const before = (await (await fetch(`${url}/ops/state`)).json()) as DashboardState;
    expect(before.limiters).toBeUndefined();
    registry.addLimiter(
      new ConcurrencyLimiter('api', { algorithm: 'fixed', initialLimit: 1 }, { clock }),
    );
    const permit = registry.limiter('api').tryAcquire() as LimitPermit;
    registry.limiter('api').tryAcquire('sheddable');
    const state = (await (await fetch(`${url}/ops/state`)).json()) as DashboardState;
    expect(state.limiters).toEqual([
      {
        name: 'api',
        algorithm: 'fixed',
        limit: 1,
        inFlight: 1,
        queued: 0,
        maxQueue: 16,
        admitted: 1,
        shed: 1,
        shedBy: { 'critical-plus': 0, critical: 0, 'sheddable-plus': 0, sheddable: 1 },
        shedding: true,
      },
    ]);
    permit.succeed();
  });

  it('answers <path>/state with the same state as JSON, with the top children of a family', async () => {
    const { url, registry, clock } = await start(
      platform,
      { path: '/ops/breakers/', topChildren: 2 },
      { inventory: { perKey: { maxKeys: 10 }, consecutiveFailures: 1 } },
    );
    const inventory = registry.get('inventory');
    await inventory.forKey('a').execute(() => Promise.resolve(1));
    await inventory
      .forKey('b')
      .execute(fail)
      .catch(() => undefined);
    await inventory.forKey('c').execute(() => Promise.resolve(1));
    const response = await fetch(`${url}/ops/breakers/state`);
    expect(response.status).toBe(200);
    const state = (await response.json()) as DashboardState;
    expect(state.breakers[0]!.snapshot.family).toMatchObject({ keys: 3, unhealthyKeys: 1 });
    expect(state.breakers[0]!.topChildren).toEqual([
      // Its window starts empty again on opening: what opened it is in its snapshot's lastTransition.
      {
        key: 'b',
        state: 'open',
        since: clock.now(),
        failureRate: 0,
        calls: 0,
        failures: 0,
        rejected: 0,
        retryAfterMs: 10_000,
        lastTransition: {
          from: 'closed',
          to: 'open',
          reason: 'consecutive-failures',
          at: clock.now(),
          consecutiveFailures: 1,
        },
      },
      {
        key: 'a',
        state: 'closed',
        since: clock.now(),
        failureRate: 0,
        calls: 1,
        failures: 0,
        rejected: 0,
      },
    ]);
  });

  it('has no control route unless control is on', async () => {
    const { url, registry } = await start(platform, {});
    const response = await fetch(`${url}/circuit-breakers/force`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ breaker: 'payments', state: 'open' }),
    });
    expect(response.status).toBe(404);
    expect(registry.get('payments').snapshot().forced).toBeUndefined();
  });

  it('forces and resets with the page token, and refuses requests another origin could make', async () => {
    const { url, registry } = await start(platform, { control: true, guard: () => true });
    const html = await (await fetch(`${url}/circuit-breakers`)).text();
    const { token } = JSON.parse(/id="cb-config">(.*?)<\/script>/.exec(html)![1]!) as {
      token: string;
    };
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(html).toContain('id="cb-reason"');
    // `payments/force`: the action, with the breaker's name in the body as the page sends it.
    const post = (path: string, headers: Record<string, string>, body: object = {}) =>
      fetch(`${url}/circuit-breakers/${path.slice(path.lastIndexOf('/') + 1)}`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ breaker: path.slice(0, path.lastIndexOf('/')), ...body }),
      }).then(async (response) => ({
        status: response.status,
        message:
          response.status === 204
            ? undefined
            : ((await response.json()) as { message: string }).message,
      }));
    const json = { 'content-type': 'application/json' };
    const good = { ...json, 'x-circuit-breaker-dashboard': token };

    expect(await post('payments/force', json, { state: 'open' })).toEqual({
      status: 403,
      message:
        "Control requests must carry the page's token in the x-circuit-breaker-dashboard header: reload the page.",
    });
    expect(
      await post(
        'payments/force',
        { ...good, 'x-circuit-breaker-dashboard': `${token.slice(1)}x` },
        { state: 'open' },
      ),
    ).toMatchObject({ status: 403 });
    const crossSite =
      'The circuit breaker dashboard answers its own page (same origin) and a link to the page, nothing another site sends; behind a reverse proxy that rewrites Host, add the name the browser uses to allowedHosts.';
    expect(
      await post('payments/force', { ...good, origin: 'https://evil.example' }, { state: 'open' }),
    ).toEqual({ status: 403, message: crossSite });
    expect(
      await post('payments/force', { ...good, 'sec-fetch-site': 'cross-site' }, { state: 'open' }),
    ).toEqual({ status: 403, message: crossSite });
    expect(
      await post(
        'payments/force',
        { 'x-circuit-breaker-dashboard': token, 'content-type': 'text/plain' },
        { state: 'open' },
      ),
    ).toEqual({
      status: 415,
      message: 'Control requests must send a JSON body (content-type: application/json).',
    });
    expect(await post('payments/force', good, { state: 'sideways' })).toEqual({
      status: 400,
      message: `"state" must be 'open' or 'closed', got "sideways".`,
    });
    expect(await post('nobody/reset', good)).toEqual({
      status: 404,
      message: 'No circuit breaker is named "nobody".',
    });
    expect(registry.get('payments').snapshot().forced).toBeUndefined();

    const origin = new URL(url).origin;
    expect(
      await post(
        'payments/force',
        { ...good, origin, 'sec-fetch-site': 'same-origin' },
        { state: 'open', reason: 'maintenance' },
      ),
    ).toEqual({ status: 204, message: undefined });
    expect(registry.get('payments').snapshot()).toMatchObject({
      state: 'isolated',
      forced: { state: 'open', reason: 'maintenance', by: 'circuit breaker dashboard' },
    });
    expect(await post('payments/force', good, { state: 'closed' })).toEqual({
      status: 204,
      message: undefined,
    });
    // The page's "Force closed" is force('closed'), the alias of metrics-only.
    expect(registry.get('payments').snapshot().forced).toMatchObject({
      state: 'metrics-only',
      reason: 'forced from the dashboard',
    });
    expect(await post('payments/reset', good)).toEqual({ status: 204, message: undefined });
    const reset = registry.get('payments').snapshot();
    expect([reset.state, reset.forced]).toEqual(['closed', undefined]);
  });

  it('serves nothing the guard refuses: page, state, stream and controls', async () => {
    class DenyGuard implements CanActivate {
      canActivate(context: ExecutionContext): boolean {
        const request = context.switchToHttp().getRequest<{ headers: Record<string, string> }>();
        return request.headers['x-operator'] === 'yes';
      }
    }
    const { url } = await start(platform, { guard: DenyGuard, control: true });
    for (const path of ['', '/state', '/stream'])
      expect((await fetch(`${url}/circuit-breakers${path}`)).status).toBe(403);
    expect((await fetch(`${url}/circuit-breakers/reset`, { method: 'POST' })).status).toBe(403);
    expect(
      (await fetch(`${url}/circuit-breakers/state`, { headers: { 'x-operator': 'yes' } })).status,
    ).toBe(200);
  });

  it('serves at most maxStreams streams at once', async () => {
    const { url, app } = await start(platform, { maxStreams: 2 });
    await stream(`${url}/circuit-breakers/stream`);
    await stream(`${url}/circuit-breakers/stream`);
    const third = await fetch(`${url}/circuit-breakers/stream`);
    expect(third.status).toBe(503);
    expect(((await third.json()) as { message: string }).message).toBe(
      'The circuit breaker dashboard already serves 2 streams (maxStreams); close a page or raise maxStreams.',
    );
    expect(app.get(CircuitBreakerDashboardService).openStreams).toBe(2);
  });

  it('app.close() ends every stream and leaves no socket, server or timer behind', async () => {
    const handles = () =>
      process
        .getActiveResourcesInfo()
        .filter(
          (kind) => kind === 'TCPSocketWrap' || kind === 'TCPServerWrap' || kind === 'Timeout',
        );
    // What earlier tests closed may still be closing.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const before = handles().length;
    const { url, app } = await start(platform, { intervalMs: 100 });
    const sockets = new Set<Socket>();
    (app.getHttpServer() as Server).on('connection', (socket: Socket) => sockets.add(socket));
    const open = await Promise.all([1, 2, 3].map(() => stream(`${url}/circuit-breakers/stream`)));
    await Promise.all(open.map((client) => client.next((event) => event.type === 'snapshot')));
    expect(app.get(CircuitBreakerDashboardService).openStreams).toBe(3);
    await app.close();
    apps.length = 0;
    await Promise.all(open.map((client) => client.ended));
    expect(app.get(CircuitBreakerDashboardService).openStreams).toBe(0);
    expect([...sockets].filter((socket) => !socket.destroyed)).toEqual([]);
    // The clients' ends of the sockets close a moment after the server's.
    await until(() => handles().length <= before, 2_000);
    expect(handles().length).toBe(before);
  });

  it('drops a page that stops reading once its pending events pass maxPendingDataLength, and a page that leaves', async () => {
    const many = Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [`dependency-${String(i).padStart(3, '0')}`, {}]),
    );
    const { url, app } = await start(
      platform,
      { intervalMs: 100, maxPendingDataLength: 64 * 1024 },
      many,
    );
    const service = app.get(CircuitBreakerDashboardService);
    const { port } = new URL(url);
    // A client that sends its request and never reads: the kernel's buffers fill, then Nest's pending events.
    const stuck = connect(Number(port), '127.0.0.1');
    stuck.write(
      `GET /circuit-breakers/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    stuck.pause();
    await until(() => service.openStreams === 1);
    await until(() => service.openStreams === 0, 30_000);
    stuck.destroy();

    const leaving = await stream(`${url}/circuit-breakers/stream`);
    await until(() => service.openStreams === 1);
    leaving.close();
    await until(() => service.openStreams === 0);
  }, 40_000);
});

describe('the dashboard on express, with a store and a family', () => {
  it("shows this replica's view of the fleet from what the store says of itself", async () => {
    let reachable = true;
    const store = {
      instanceId: 'shop-7f9c:1',
      get shared() {
        return reachable;
      },
      storeErrors: 2,
      droppedWrites: 0,
      coordinator: {
        transitioned: () => undefined,
        mayProbe: () => true,
        coordinationOf: () => ({ shared: reachable, storeErrors: 2 }),
      },
      hydrate: async () => undefined,
      close: async () => undefined,
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({
          clock: new ManualClock(),
          store,
          breakers: { payments: {}, search: {}, flags: { share: false } },
        }),
        CircuitBreakerDashboardModule.forRoot(),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init();
    const dashboard = app.get(CircuitBreakerDashboardService);
    expect(dashboard.state().fleet).toEqual({
      instanceId: 'shop-7f9c:1',
      shared: true,
      storeErrors: 2,
      droppedWrites: 0,
      sharingBreakers: 2,
      sharedNow: 2,
    });
    reachable = false;
    expect(dashboard.state().fleet).toMatchObject({
      shared: false,
      sharingBreakers: 2,
      sharedNow: 0,
    });
  });

  it("shows the store's fleet view, read at most every 3 s whatever the pages and ticks, and its failures as text", async () => {
    const clock = new ManualClock();
    const reads: Array<(view: unknown) => void> = [];
    const failures: Error[] = [];
    const store = {
      instanceId: 'a',
      shared: true,
      storeErrors: 0,
      droppedWrites: 0,
      coordinator: {
        transitioned: () => undefined,
        mayProbe: () => true,
        coordinationOf: () => ({ shared: true, storeErrors: 0 }),
      },
      hydrate: async () => undefined,
      close: async () => undefined,
      fleetView: () => {
        const failure = failures.shift();
        if (failure !== undefined) return Promise.reject(failure);
        return new Promise((resolve) => reads.push(resolve));
      },
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({ clock, store, breakers: { payments: {} } }),
        CircuitBreakerDashboardModule.forRoot({ intervalMs: 100 }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const dashboard = app.get(CircuitBreakerDashboardService);
    // Before the store answers: an empty view, no `at`.
    expect(dashboard.state().fleet?.view).toEqual({ replicas: [], breakers: {} });
    const answer = {
      at: 1,
      replicas: [
        {
          instanceId: 'a',
          lastSeenAt: 1,
          ageMs: 120,
          shared: true,
          notClosed: { payments: 'open' },
          breakers: 1,
          truncated: true,
        },
        { instanceId: 'b', lastSeenAt: 1, ageMs: 2_400, shared: false, notClosed: {}, breakers: 1 },
      ],
      breakers: {
        payments: {
          shared: { state: 'open', openUntil: 90_000 },
          replicasOpen: 1,
          replicasHalfOpen: 0,
          replicasNotClosed: 1,
        },
      },
    };
    reads.shift()!(answer);
    await new Promise((resolve) => setImmediate(resolve));
    const view = {
      at: clock.now(),
      replicas: [
        {
          instanceId: 'a',
          lastSeenAt: 1,
          ageMs: 120,
          shared: true,
          notClosed: { payments: 'open' },
          breakers: 1,
          truncated: true,
        },
        { instanceId: 'b', lastSeenAt: 1, ageMs: 2_400, shared: false, notClosed: {}, breakers: 1 },
      ],
      breakers: answer.breakers,
    };
    expect(dashboard.state().fleet?.view).toEqual(view);
    // Two pages, ten ticks each at 100 ms, the module's clock still: no read more.
    const [first, second] = [
      await stream(`${url}/circuit-breakers/stream`),
      await stream(`${url}/circuit-breakers/stream`),
    ];
    await first.next((event) => event.type === 'snapshot', 10);
    await second.next((event) => event.type === 'snapshot', 10);
    expect(JSON.parse(first.events.at(-1)!.data).fleet.view).toEqual(view);
    expect(reads).toHaveLength(0);
    // 3 s later, the next snapshot asks again; it fails: the last answer stays, with why.
    clock.advance(3_000);
    failures.push(new Error('Redis did not answer within 1000 ms'));
    dashboard.state();
    await new Promise((resolve) => setImmediate(resolve));
    expect(dashboard.state().fleet?.view).toEqual({
      ...view,
      error: 'the fleet view could not be read: Redis did not answer within 1000 ms',
    });
    expect(reads).toHaveLength(0);
    clock.advance(2_999);
    dashboard.state();
    expect(reads).toHaveLength(0);
    clock.advance(1);
    dashboard.state();
    expect(reads).toHaveLength(1);
    // A read still unanswered is never doubled, however late.
    clock.advance(10_000);
    dashboard.state();
    expect(reads).toHaveLength(1);
  });

  it('sends a storm of transitions as one event, listing the first 100 and counting the rest', async () => {
    const { url, registry } = await start(
      'express',
      { intervalMs: 60_000 },
      { inventory: { perKey: { maxKeys: 200 } } },
    );
    const inventory = registry.get('inventory');
    for (let i = 0; i < 150; i++)
      await inventory.forKey(`host-${i}`).execute(() => Promise.resolve(i));
    const client = await stream(`${url}/circuit-breakers/stream`);
    await client.next((event) => event.type === 'snapshot');
    inventory.force('open', { reason: 'storm' });
    const update = JSON.parse(
      (await client.next((event) => event.type === 'transitions')).data,
    ) as DashboardTransitions;
    // The family and its 150 children: 151 transitions in one synchronous force().
    expect([update.transitions.length, update.omitted]).toEqual([100, 51]);
    expect(update.transitions[0]).toMatchObject({
      breaker: 'inventory',
      to: 'isolated',
      reason: 'forced',
    });
    expect(update.transitions[1]).toMatchObject({
      breaker: 'inventory',
      key: 'host-0',
      to: 'isolated',
    });
    expect(update.breakers.map((view) => view.snapshot.name)).toEqual(['inventory']);
    expect(update.breakers[0]!.aggregate).toMatchObject({ admitted: 150, rejected: 0 });
    expect(client.events.filter((event) => event.type === 'transitions')).toHaveLength(1);
  });
});

describe('CircuitBreakerDashboardModule.forRoot()', () => {
  it('refuses control without a guard, and bad options, naming the option', () => {
    expect(() => CircuitBreakerDashboardModule.forRoot({ control: true })).toThrow(
      new TypeError(
        'CircuitBreakerDashboardModule: option "control" lets whoever opens the page force breakers open, and no "guard" says who may. ' +
          'Pass guard: a guard class, instance or (context) => boolean that admits only your operators; ' +
          'if a global guard already protects every route, say so with guard: () => true.',
      ),
    );
    expect(() => CircuitBreakerDashboardModule.forRoot({ intervalMs: 10 })).toThrow(
      new TypeError(
        'CircuitBreakerDashboardModule: option "intervalMs" must be an integer >= 100, got 10.',
      ),
    );
    expect(() => CircuitBreakerDashboardModule.forRoot({ path: 'a b' })).toThrow(
      /^CircuitBreakerDashboardModule: option "path" must be a route path of letters, digits/,
    );
    expect(() => CircuitBreakerDashboardModule.forRoot({ guard: {} as never })).toThrow(
      /^CircuitBreakerDashboardModule: option "guard" must be a guard class, a guard instance/,
    );
    expect(() => CircuitBreakerDashboardModule.forRoot({ colour: 'red' } as never)).toThrow(
      /"colour"/,
    );
  });

  it('serves no route with enabled: false', async () => {
    const { url } = await start('express', { enabled: false });
    expect((await fetch(`${url}/circuit-breakers`)).status).toBe(404);
  });

  it('fails start-up without CircuitBreakerModule, naming the import to add', async () => {
    const moduleRef = Test.createTestingModule({
      imports: [CircuitBreakerDashboardModule.forRoot()],
    });
    await expect(moduleRef.compile()).rejects.toThrow(
      'CircuitBreakerDashboardModule needs CircuitBreakerModule, whose CircuitBreakerRegistry it reads',
    );
  });
});

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
