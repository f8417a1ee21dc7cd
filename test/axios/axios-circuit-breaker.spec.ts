import { getEventListeners } from 'node:events';
import { Agent } from 'node:http';
import axios, { AxiosError, type AxiosInstance } from 'axios';
import { describe, expect, it } from 'vitest';
import { withCircuitBreaker } from '../../lib/axios/index.js';
import {
  Breaker,
  CallTimeoutError,
  CallRejectedError,
  InjectedFaultError,
} from '../../lib/core/index.js';
import type { BreakerOptions } from '../../lib/core/index.js';
import { FAMILY_DEFAULT_KEY } from '../../lib/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import { upstream, client, rejectionOf } from './axios-fixtures.js';

function breakerOf(options: BreakerOptions, clock = new ManualClock()): Breaker {
  return new Breaker('upstream', options, { clock });
}

describe('withCircuitBreaker(axios instance)', () => {
  it('gives a request the injected fault instead of sending it', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = new Breaker('upstream', {}, { clock: new ManualClock(), faultInjection: true });
    const fault = breaker.injectFault({ fail: true });
    withCircuitBreaker(http, { breaker });

    const error = await rejectionOf(http.get('/ok'));
    expect([error instanceof InjectedFaultError, server.requests, fault.injected]).toEqual([
      true,
      0,
      1,
    ]);
    expect(breaker.snapshot().totals.failures.total).toBe(1);
  });

  it('counts 5xx as failures, then refuses without opening a connection', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ consecutiveFailures: 2 });
    withCircuitBreaker(http, { breaker });

    expect((await http.get('/ok')).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const error = await rejectionOf(http.get('/fail'));
      expect(error).toBeInstanceOf(AxiosError);
      expect((error as AxiosError).response?.status).toBe(500);
    }
    expect(breaker.state).toBe('open');
    expect({ connections: server.connections, requests: server.requests }).toEqual({
      connections: 3,
      requests: 3,
    });

    const refused = await rejectionOf(http.get('/ok'));
    expect(refused).toBeInstanceOf(CallRejectedError);
    expect(refused).toMatchObject({ breakerName: 'upstream', reason: 'open', state: 'open' });
    // A request with its own adapter is refused too: the breaker wraps whatever adapter a request uses.
    expect(await rejectionOf(http.get('/ok', { adapter: 'fetch' }))).toBeInstanceOf(
      CallRejectedError,
    );
    expect({ connections: server.connections, requests: server.requests }).toEqual({
      connections: 3,
      requests: 3,
    });
    const totals = breaker.snapshot().totals;
    expect({
      admitted: totals.admitted,
      successes: totals.successes,
      server: totals.failures.server,
      rejected: totals.rejected.total,
    }).toEqual({ admitted: 3, successes: 1, server: 2, rejected: 2 });
  });

  it('aborts the request at the breaker deadline: the server sees its socket close', async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 100, consecutiveFailures: 1 }, clock);
    withCircuitBreaker(http, { breaker });

    const pending = rejectionOf(http.get('/hang'));
    await server.received(1);
    clock.advance(100);
    const error = await pending;
    expect(error).toBeInstanceOf(CallTimeoutError);
    await server.abandonedBy(1);
    expect(server.abandoned).toBe(1);
    const snapshot = breaker.snapshot();
    expect(snapshot.state).toBe('open');
    expect(snapshot.totals.timeouts).toBe(1);
  });

  it("aborts a request through axios' fetch adapter at the deadline too", async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 100 }, clock);
    withCircuitBreaker(http, { breaker });

    const pending = rejectionOf(http.get('/hang', { adapter: 'fetch' }));
    await server.received(1);
    clock.advance(100);
    expect(await pending).toBeInstanceOf(CallTimeoutError);
    await server.abandonedBy(1);
    expect(server.abandoned).toBe(1);
  });

  it("gives an adapter of yours a real AbortSignal that aborts with the breaker's reason", async () => {
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 100 }, clock);
    const heard: { self: boolean; reason: unknown; aborted: boolean }[] = [];
    let settle: (() => void) | undefined;
    const instance = axios.create({
      baseURL: 'http://127.0.0.1:9',
      adapter: (config) =>
        new Promise((resolve) => {
          const signal = config.signal!;
          expect(signal).toBeInstanceOf(AbortSignal);
          signal.addEventListener!('abort', function (this: unknown) {
            heard.push({
              self: this === signal,
              reason: (signal as { reason?: unknown }).reason,
              aborted: signal.aborted!,
            });
          });
          settle = () => resolve({ data: '', status: 200, statusText: 'OK', headers: {}, config });
        }),
    });
    withCircuitBreaker(instance, { breaker });

    const timedOut = rejectionOf(instance.get('/a'));
    clock.advance(100);
    const error = await timedOut;
    expect(error).toBeInstanceOf(CallTimeoutError);
    expect(heard).toEqual([{ self: true, reason: error, aborted: true }]);

    heard.length = 0;
    const answered = instance.get('/b');
    settle!();
    expect((await answered).status).toBe(200);
    clock.advance(100);
    expect(heard).toEqual([]);
  });

  it("timeoutMs(config): a request's own deadline replaces the breaker's; axios' timeout is not read", async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 100 }, clock);
    withCircuitBreaker(http, {
      breaker,
      timeoutMs: (config) => (config.url === '/hang' ? 3_000 : undefined),
    });

    // axios' own timeout (60 s here) is left to axios: the breaker's deadline is the request's.
    const pending = rejectionOf(http.get('/hang', { timeout: 60_000 }));
    await server.received(1);
    clock.advance(2_999);
    expect(server.abandoned).toBe(0);
    clock.advance(1);
    expect(await pending).toEqual(new CallTimeoutError('upstream', 3_000));
    await server.abandonedBy(1);
    expect(breaker.snapshot().totals.timeouts).toBe(1);
  });

  it('a request deadline the breaker refuses rejects the request, which is not sent', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({});
    withCircuitBreaker(http, { breaker, timeoutMs: () => -5 });
    const error = await rejectionOf(http.get('/ok'));
    expect(error).toEqual(
      new TypeError(
        'Circuit breaker "upstream": acquire() option "timeoutMs" must be a positive number of milliseconds up to 2147483647, or false on a breaker built with timeoutMs: false; got -5. Pass this call\'s deadline, or leave it out for the breaker\'s.',
      ),
    );
    expect(server.requests).toBe(0);
  });

  it.each([
    ['retry-after', '3', 3000],
    ['retry-after-ms', '1500', 1500],
    ['x-ms-retry-after-ms', '2500', 2500],
  ])('a 429 with %s: %s pauses the breaker for %i ms', async (header, value, pauseMs) => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ consecutiveFailures: 5 });
    withCircuitBreaker(http, { breaker });

    const error = await rejectionOf(http.get(`/status/429?${header}=${value}`));
    expect((error as AxiosError).response?.status).toBe(429);
    const snapshot = breaker.snapshot();
    expect(snapshot.retryAfterMs).toBe(pauseMs);
    expect(snapshot.totals.overloads).toBe(1);
    expect(snapshot.totals.failures.total).toBe(0);

    const refused = await rejectionOf(http.get('/ok'));
    expect(refused).toBeInstanceOf(CallRejectedError);
    expect((refused as CallRejectedError).retryAfterMs).toBe(pauseMs);
    expect(server.requests).toBe(1);
  });

  it('a 429 with a Retry-After date pauses until that date', async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf({ consecutiveFailures: 5 }, clock);
    withCircuitBreaker(http, { breaker });
    const date = new Date(clock.now() + 7000).toUTCString();

    await rejectionOf(http.get(`/status/429?retry-after=${encodeURIComponent(date)}`));
    expect(breaker.snapshot().retryAfterMs).toBe(7000);
  });

  it('a 503 with Retry-After is overload, without it a failure', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ consecutiveFailures: 5 });
    withCircuitBreaker(http, { breaker });

    await rejectionOf(http.get('/status/503'));
    await rejectionOf(http.get('/status/503?retry-after=2'));
    const snapshot = breaker.snapshot();
    expect(snapshot.totals.failures.server).toBe(1);
    expect(snapshot.totals.overloads).toBe(1);
    expect(snapshot.retryAfterMs).toBe(2000);
  });

  it('classifies a response that validateStatus accepted', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ consecutiveFailures: 1 });
    withCircuitBreaker(http, { breaker });

    const response = await http.get('/fail', { validateStatus: () => true });
    expect(response.status).toBe(500);
    expect(breaker.state).toBe('open');
  });

  it('counts a refused connection as a failure', async () => {
    const server = await upstream();
    const url = server.url;
    await server.close();
    const http = client(url);
    const breaker = breakerOf({ consecutiveFailures: 1 });
    withCircuitBreaker(http, { breaker });

    const error = await rejectionOf(http.get('/ok'));
    expect((error as AxiosError).code).toBe('ECONNREFUSED');
    expect(breaker.snapshot().totals.failures.connection).toBe(1);
    expect(breaker.state).toBe('open');
  });

  it("ignores the caller's own abort and cancel, and the server sees the socket close", async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ consecutiveFailures: 1 });
    withCircuitBreaker(http, { breaker });

    const controller = new AbortController();
    const aborted = rejectionOf(http.get('/hang', { signal: controller.signal }));
    await server.received(1);
    controller.abort();
    expect(axios.isCancel(await aborted)).toBe(true);
    await server.abandonedBy(1);

    const source = axios.CancelToken.source();
    const cancelled = rejectionOf(http.get('/hang', { cancelToken: source.token }));
    await server.received(2);
    source.cancel('no longer needed');
    const error = await cancelled;
    expect(axios.isCancel(error)).toBe(true);
    expect((error as Error).message).toBe('no longer needed');
    await server.abandonedBy(2);

    const snapshot = breaker.snapshot();
    expect(snapshot.state).toBe('closed');
    expect(snapshot.totals.ignored).toBe(2);
    expect(snapshot.totals.failures.total).toBe(0);
  });

  it("leaves no listener on the caller's signal or cancel token, whatever the outcome", async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf({ consecutiveFailures: 2, timeoutMs: 100 }, clock);
    withCircuitBreaker(http, { breaker });
    const signal = new AbortController().signal;
    const source = axios.CancelToken.source();
    const listeners = (): number =>
      getEventListeners(signal, 'abort').length +
      // axios keeps a token's subscribers in this field; nothing public counts them.
      ((source.token as unknown as Record<string, unknown[] | undefined>)['_listeners']?.length ??
        0);
    const options = { signal, cancelToken: source.token };

    await http.get('/ok', options);
    expect(listeners()).toBe(0);
    await rejectionOf(http.get('/fail', options));
    expect(listeners()).toBe(0);
    const hung = rejectionOf(http.get('/hang', options));
    await server.received(3);
    clock.advance(100);
    expect(await hung).toBeInstanceOf(CallTimeoutError);
    expect(listeners()).toBe(0);
    expect(breaker.state).toBe('open');
    expect(await rejectionOf(http.get('/ok', options))).toBeInstanceOf(CallRejectedError);
    expect(listeners()).toBe(0);
  });

  it('a per-key family opens per origin, each independently', async () => {
    const [a, b] = [await upstream(), await upstream()];
    const http = client();
    const breaker = breakerOf({ consecutiveFailures: 1, perKey: { maxKeys: 10 } });
    withCircuitBreaker(http, { breaker });

    await rejectionOf(http.get(`${a.url}/fail`));
    expect(breaker.forKey(a.url).state).toBe('open');
    expect(await rejectionOf(http.get(`${a.url}/ok`))).toMatchObject({
      breakerName: `upstream[${a.url}]`,
      reason: 'open',
    });
    expect((await http.get(`${b.url}/ok`)).status).toBe(200);
    expect(breaker.forKey(b.url).state).toBe('closed');
    expect([...breaker.children()].map((child) => child.key)).toEqual([a.url, b.url]);
    expect({ a: a.connections, b: b.connections }).toEqual({ a: 1, b: 1 });
  });

  it('joins baseURL and url as axios does to find the origin', async () => {
    const server = await upstream();
    const http = client(`${server.url}/api/`);
    const breaker = breakerOf({ perKey: {} });
    withCircuitBreaker(http, { breaker });

    expect((await http.get('/ok')).status).toBe(200);
    expect(server.paths).toEqual(['/api/ok']);
    expect([...breaker.children()].map((child) => child.key)).toEqual([server.url]);
  });

  it("key chooses the child; undefined, or a key function's fault, is the family's default key", async () => {
    const server = await upstream();
    const http = client(server.url);
    const reported: Error[] = [];
    const breaker = new Breaker(
      'upstream',
      { perKey: {} },
      { clock: new ManualClock(), reportError: (error) => reported.push(error) },
    );
    withCircuitBreaker(http, {
      breaker,
      key: (config) => {
        if (config.url === '/ok?throw') throw new Error('no tenant');
        return config.url?.startsWith('/status') === true ? 'status' : undefined;
      },
    });

    await http.get('/status/200');
    await http.get('/ok');
    await http.get('/ok?throw');
    expect([...breaker.children()].map((child) => child.key)).toEqual([
      'status',
      FAMILY_DEFAULT_KEY,
    ]);
    expect(breaker.forKey(FAMILY_DEFAULT_KEY).snapshot().totals.successes).toBe(2);
    expect(reported.map((error) => error.message)).toEqual([
      `Circuit breaker "upstream" in withCircuitBreaker() of nestjs-circuit-breaker/axios: option "key" threw Error: no tenant; the call went on under the default key "${FAMILY_DEFAULT_KEY}". Make the key function return the target's key, or undefined when there is none. Later errors of this site's key function are not reported again.`,
    ]);
  });

  it('skip bypasses the breaker: not counted, never refused', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ consecutiveFailures: 1 });
    withCircuitBreaker(http, { breaker, skip: (config) => config.url === '/ok?health' });

    await rejectionOf(http.get('/fail'));
    expect(breaker.state).toBe('open');
    expect((await http.get('/ok?health')).status).toBe(200);
    expect(breaker.snapshot().totals.admitted).toBe(1);
    expect(server.requests).toBe(2);
  });

  it('a config sent again (a retry of error.config) goes through the breaker once', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ consecutiveFailures: 5 });
    withCircuitBreaker(http, { breaker });

    const error = (await rejectionOf(http.get('/fail'))) as AxiosError;
    // The caller's config comes back, not the copy that carried the call's signal.
    expect(error.config?.signal).toBeUndefined();
    await rejectionOf(http.request(error.config!));
    expect(breaker.snapshot().totals.admitted).toBe(2);
    expect(breaker.snapshot().totals.failures.server).toBe(2);
  });

  it("hands back the caller's own signal on response.config and error.config, whatever ended the call", async () => {
    const server = await upstream();
    const clock = new ManualClock();
    const breaker = breakerOf({ consecutiveFailures: 5, timeoutMs: 100 }, clock);
    const seen: unknown[] = [];
    const hang = new Promise<never>(() => undefined);
    const instance = axios.create({
      baseURL: server.url,
      httpAgent: new Agent({ keepAlive: false }),
      adapter: [
        (config) => {
          seen.push(config.signal);
          return config.url === '/hang' ? hang : axios.getAdapter('http')(config);
        },
      ],
    });
    withCircuitBreaker(instance, { breaker });
    const own = new AbortController().signal;

    const ok = await instance.get('/ok', { signal: own });
    const failed = (await rejectionOf(instance.get('/fail', { signal: own }))) as AxiosError;
    const bare = (await rejectionOf(instance.get('/fail'))) as AxiosError;
    const hung = rejectionOf(instance.get('/hang', { signal: own }));
    clock.advance(100);
    const timedOut = await hung;

    expect(seen).toHaveLength(4);
    expect(seen.every((signal) => signal instanceof AbortSignal && signal !== own)).toBe(true);
    expect([ok.config.signal, failed.config?.signal, failed.response?.config.signal]).toEqual([
      own,
      own,
      own,
    ]);
    expect(bare.config !== undefined && 'signal' in bare.config).toBe(false);
    expect(timedOut).toBeInstanceOf(CallTimeoutError);
    expect(breaker.snapshot().totals).toMatchObject({ successes: 1, timeouts: 1 });
  });

  it("an adapter of your own still sees the call's aborted signal after the deadline ended the call", async () => {
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 100 }, clock);
    let resume: () => void = () => undefined;
    const later = new Promise<void>((resolve) => (resume = resolve));
    const read: { aborted: boolean; reason: unknown }[] = [];
    const instance = axios.create({
      adapter: [
        async (config) => {
          await later;
          // Read after an await, as a custom adapter may: the request must still be abortable.
          const signal = config.signal as AbortSignal | undefined;
          read.push({ aborted: signal?.aborted === true, reason: signal?.reason });
          throw new Error('not sent');
        },
      ],
    });
    withCircuitBreaker(instance, { breaker });

    const pending = rejectionOf(instance.get('http://upstream.test/slow'));
    clock.advance(100);
    const error = await pending;
    resume();
    await new Promise((resolve) => setImmediate(resolve));

    expect(error).toBeInstanceOf(CallTimeoutError);
    expect(read).toEqual([{ aborted: true, reason: error }]);
  });

  it('the function it returns takes the breaker away', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ consecutiveFailures: 1 });
    const unwrap = withCircuitBreaker(http, { breaker });

    const failed = (await rejectionOf(http.get('/fail'))) as AxiosError;
    expect(await rejectionOf(http.get('/ok'))).toBeInstanceOf(CallRejectedError);
    unwrap();
    unwrap();
    expect((await http.get('/ok')).status).toBe(200);
    // A config that still holds the protected adapter (a retry of error.config) goes straight through.
    expect(((await rejectionOf(http.request(failed.config!))) as AxiosError).response?.status).toBe(
      500,
    );
    expect(server.requests).toBe(3);
    expect(breaker.snapshot().totals.admitted).toBe(1);
    // Once taken away, the instance may be wired again; an old config goes through the new breaker only.
    const next = breakerOf({ consecutiveFailures: 5 });
    withCircuitBreaker(http, { breaker: next });
    await rejectionOf(http.request(failed.config!));
    expect(next.snapshot().totals.admitted).toBe(1);
    expect(breaker.snapshot().totals.admitted).toBe(1);
  });

  it('refuses wiring mistakes with messages naming the breaker and the option', () => {
    const http = client();
    const breaker = breakerOf({});
    expect(() => withCircuitBreaker({} as AxiosInstance, { breaker })).toThrow(
      'withCircuitBreaker(target): target must be an axios instance or an HttpService (its axiosRef), got an object (Object). Pass axios.create(...) or the HttpService you inject.',
    );
    expect(() => withCircuitBreaker(http, { breaker: 'upstream' as unknown as Breaker })).toThrow(
      'withCircuitBreaker(target, options): option "breaker" must be a Breaker, got "upstream". Pass registry.get(name), an @InjectCircuitBreaker() breaker or new Breaker(...).',
    );
    expect(() => withCircuitBreaker(http, { breaker, key: () => 'k' })).toThrow(
      'withCircuitBreaker() with circuit breaker "upstream": option "key" needs a per-key family, and this breaker is a single breaker. Give the breaker a "perKey" option, or leave "key" out.',
    );
    expect(() =>
      withCircuitBreaker(http, { breaker, skip: true as unknown as () => boolean }),
    ).toThrow(
      'withCircuitBreaker() with circuit breaker "upstream": option "skip" must be a function, got true. Pass a function of the request config, or leave the option out.',
    );
    withCircuitBreaker(http, { breaker });
    expect(() => withCircuitBreaker(http, { breaker })).toThrow(
      'withCircuitBreaker() with circuit breaker "upstream": this axios instance already has a circuit breaker. Call the function the first withCircuitBreaker() returned before wiring another one.',
    );
  });
});
