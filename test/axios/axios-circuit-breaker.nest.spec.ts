import { Agent } from 'node:http';
import { HttpModule, HttpService } from '@nestjs/axios';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import axios, { AxiosError } from 'axios';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { provideAxiosCircuitBreaker, withCircuitBreaker } from '../../lib/axios/index.js';
import {
  CallTimeoutError,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  CallRejectedError,
} from '../../lib/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import { countingServer, routes, type CountingServer } from './counting-server.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Started {
  app: INestApplication;
  http: HttpService;
  registry: CircuitBreakerRegistry;
  server: CountingServer;
  clock: ManualClock;
}

/** The wiring the docs show: HttpModule, CircuitBreakerModule.forRoot() and the one provider. */
async function start(): Promise<Started> {
  const server = await countingServer(routes);
  cleanups.push(() => server.close());
  const agent = new Agent({ keepAlive: false });
  cleanups.push(() => agent.destroy());
  const clock = new ManualClock();
  const moduleRef = await Test.createTestingModule({
    imports: [
      HttpModule.register({ baseURL: server.url, httpAgent: agent }),
      CircuitBreakerModule.forRoot({
        clock,
        breakers: { upstream: { consecutiveFailures: 1, timeoutMs: 100 } },
      }),
    ],
    providers: [provideAxiosCircuitBreaker(HttpService, 'upstream')],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  cleanups.push(() => app.close());
  return {
    app,
    http: app.get(HttpService),
    registry: app.get(CircuitBreakerRegistry),
    server,
    clock,
  };
}

describe('provideAxiosCircuitBreaker(HttpService, name) in a Nest application', () => {
  it('counts the Observable path and refuses with CallRejectedError, sending nothing', async () => {
    const { http, registry, server } = await start();

    expect((await firstValueFrom(http.get('/ok'))).status).toBe(200);
    const failed = await firstValueFrom(http.get('/fail')).catch((error: unknown) => error);
    expect((failed as AxiosError).response?.status).toBe(500);
    expect(registry.get('upstream').state).toBe('open');

    const refused = await firstValueFrom(http.get('/ok')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CallRejectedError);
    expect(refused).toMatchObject({ breakerName: 'upstream', reason: 'open' });
    expect({ connections: server.connections, requests: server.requests }).toEqual({
      connections: 2,
      requests: 2,
    });
  });

  it('aborts at the deadline: the subscriber gets CallTimeoutError, the server a closed socket', async () => {
    const { http, registry, server, clock } = await start();

    const pending = firstValueFrom(http.get('/hang')).catch((error: unknown) => error);
    await server.received(1);
    clock.advance(100);
    expect(await pending).toBeInstanceOf(CallTimeoutError);
    await server.abandonedBy(1);
    expect(registry.get('upstream').snapshot().totals.timeouts).toBe(1);
  });

  it('an unsubscribe cancels the request, which is ignored', async () => {
    const { http, registry, server } = await start();

    const subscription = http.get('/hang').subscribe({ error: () => undefined });
    await server.received(1);
    subscription.unsubscribe();
    await server.abandonedBy(1);
    const snapshot = registry.get('upstream').snapshot();
    expect(snapshot.state).toBe('closed');
    expect(snapshot.totals.ignored).toBe(1);
    expect(snapshot.totals.failures.total).toBe(0);
  });

  it('a per-key family from forRoot() opens per origin', async () => {
    const [a, b] = [await countingServer(routes), await countingServer(routes)];
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const moduleRef = await Test.createTestingModule({
      imports: [
        HttpModule.register({}),
        CircuitBreakerModule.forRoot({
          clock: new ManualClock(),
          breakers: { partners: { consecutiveFailures: 1, perKey: { maxKeys: 10 } } },
        }),
      ],
      providers: [provideAxiosCircuitBreaker(HttpService, 'partners')],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    cleanups.push(() => app.close());
    const http = app.get(HttpService);
    const family = app.get(CircuitBreakerRegistry).get('partners');

    await firstValueFrom(http.get(`${a.url}/fail`)).catch(() => undefined);
    const refused = await firstValueFrom(http.get(`${a.url}/ok`)).catch((error: unknown) => error);
    expect(refused).toMatchObject({ breakerName: `partners[${a.url}]`, reason: 'open' });
    expect((await firstValueFrom(http.get(`${b.url}/ok`))).status).toBe(200);
    expect({ a: a.requests, b: b.requests }).toEqual({ a: 1, b: 1 });
    expect([...family.children()].map((child) => [child.key, child.state])).toEqual([
      [a.url, 'open'],
      [b.url, 'closed'],
    ]);
  });

  it("refuses axios' default instance at start-up (plain HttpModule, or axios under a token)", async () => {
    const defaultInstanceOf = (name: string) =>
      `provideAxiosCircuitBreaker(client, "${name}"): client is axios' process-wide default instance (plain HttpModule, without register(), gives it to HttpService), so circuit breaker "${name}" would be in front of every axios call of the process. Import HttpModule.register({...}) (or registerAsync()) in this module, so that its HttpService has an instance of its own; to protect every axios call of the process on purpose, call withCircuitBreaker(axios, { breaker }) yourself.`;
    const interceptors = () =>
      (axios.interceptors.request as unknown as { handlers: unknown[] }).handlers.filter(
        (handler) => handler !== null,
      ).length;
    const before = interceptors();
    const breakers = { upstream: { consecutiveFailures: 1 } };

    const plain = Test.createTestingModule({
      imports: [HttpModule, CircuitBreakerModule.forRoot({ breakers })],
      providers: [provideAxiosCircuitBreaker(HttpService, 'upstream')],
    }).compile();
    await expect(plain).rejects.toThrow(new TypeError(defaultInstanceOf('upstream')));
    const token = Test.createTestingModule({
      imports: [CircuitBreakerModule.forRoot({ breakers })],
      providers: [
        { provide: 'AXIOS', useValue: axios },
        provideAxiosCircuitBreaker('AXIOS', 'upstream'),
      ],
    }).compile();
    await expect(token).rejects.toThrow(new TypeError(defaultInstanceOf('upstream')));

    // Nothing was wired: the default instance has the interceptors it had, and takes a breaker directly.
    expect(interceptors()).toBe(before);
    const app = await Test.createTestingModule({
      imports: [HttpModule, CircuitBreakerModule.forRoot({ breakers })],
    }).compile();
    cleanups.push(() => app.close());
    const unwrap = withCircuitBreaker(app.get(HttpService), {
      breaker: app.get(CircuitBreakerRegistry).get('upstream'),
    });
    expect(interceptors()).toBe(before + 1);
    unwrap();
    expect(interceptors()).toBe(before);
  });

  it('takes the breaker away when the application closes', async () => {
    const { app, http, registry } = await start();
    const instance = http.axiosRef;

    await app.close();
    const unwrap = withCircuitBreaker(instance, { breaker: registry.get('upstream') });
    unwrap();
  });
});
