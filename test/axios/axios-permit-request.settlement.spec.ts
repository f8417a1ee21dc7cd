import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { getEventListeners } from 'node:events';
import type { Readable } from 'node:stream';
import axios, { AxiosError, type AxiosInstance } from 'axios';
import { describe, expect, it } from 'vitest';
import { withCircuitBreaker } from '../../lib/axios/index.js';
import { Breaker, CallRejectedError, CallTimeoutError } from '../../lib/core/index.js';
import type { BreakerOptions } from '../../lib/core/index.js';
import { BREAKER_CHANNEL_NAMES, breakerChannels } from '../../lib/diagnostics/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import {
  cleanups,
  holdingUpstream,
  upstream,
  client,
  rejectionOf,
  settled,
} from './axios-fixtures.js';
import type { CountingServer } from './counting-server.js';

// How a request under the permit path ends: requests to axios' own http adapter go out under acquire(),
// and what the breaker decides reaches them through their RequestSignal only.

function breakerOf(options: BreakerOptions, clock: ManualClock, faults = false): Breaker {
  return new Breaker('upstream', options, { clock, faultInjection: faults });
}

describe('what the permit path leaves behind', () => {
  it("leaves no listener on the caller's own signal, whether the request answers, fails or times out", async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 100 }, clock);
    withCircuitBreaker(http, { breaker });
    const controller = new AbortController();
    const signal = controller.signal;

    expect((await http.get('/ok', { signal })).status).toBe(200);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    await rejectionOf(http.get('/fail', { signal }));
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    const late = rejectionOf(http.get('/hang', { signal }));
    await server.received(3);
    clock.advance(100);
    expect(await late).toBeInstanceOf(CallTimeoutError);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    expect(breaker.snapshot().totals).toMatchObject({ successes: 1, timeouts: 1 });
  });

  it('gives a bulkhead slot back however the request ends: answer, failure, deadline, cancel, fault latency cancelled', async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf(
      { timeoutMs: 100, bulkhead: { maxConcurrent: 1, maxQueue: 0 } },
      clock,
      true,
    );
    withCircuitBreaker(http, { breaker });
    const active = (): number => breaker.snapshot().bulkhead!.active;

    await http.get('/ok');
    expect(active()).toBe(0);
    await rejectionOf(http.get('/fail'));
    expect(active()).toBe(0);
    const late = rejectionOf(http.get('/hang'));
    await server.received(3);
    clock.advance(100);
    expect(await late).toBeInstanceOf(CallTimeoutError);
    expect(active()).toBe(0);
    const source = axios.CancelToken.source();
    const cancelled = rejectionOf(http.get('/hang', { cancelToken: source.token }));
    await server.received(4);
    source.cancel('gone');
    expect(axios.isCancel(await cancelled)).toBe(true);
    expect(active()).toBe(0);
    const fault = breaker.injectFault({ latencyMs: 50 });
    const other = axios.CancelToken.source();
    const waiting = rejectionOf(http.get('/ok', { cancelToken: other.token }));
    await settled();
    other.cancel('bored');
    expect(axios.isCancel(await waiting)).toBe(true);
    expect(active()).toBe(0);
    fault.remove();
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 5, ignored: 2, timeouts: 1 });
  });
});

describe('a retry of error.config', () => {
  it('goes through the breaker once more, without the signal of the first try', async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 100 }, clock);
    withCircuitBreaker(http, { breaker });
    const controller = new AbortController();

    const first = (await rejectionOf(
      http.get('/fail', { signal: controller.signal }),
    )) as AxiosError;
    expect(first.config!.signal).toBe(controller.signal);
    const plain = (await rejectionOf(http.get('/fail'))) as AxiosError;
    expect(Object.hasOwn(plain.config!, 'signal')).toBe(false);
    const again = (await rejectionOf(http.request(plain.config!))) as AxiosError;

    expect(again.response?.status).toBe(500);
    expect(Object.hasOwn(again.config!, 'signal')).toBe(false);
    expect(server.requests).toBe(3);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 3 });
    expect(breaker.snapshot().totals.failures.total).toBe(3);
  });
});

describe('redirects and the deadline', () => {
  it('follows a redirect under one permit: one call, counted by the final answer', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ timeoutMs: 100 }, new ManualClock());
    withCircuitBreaker(http, { breaker });

    const response = await http.get('/status/302?location=%2Fok');

    expect(response.status).toBe(200);
    expect(server.paths).toEqual(['/status/302?location=%2Fok', '/ok']);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 1, successes: 1 });
  });

  it('with maxRedirects: 0, a 3xx is an answer (axios rejects it, the breaker counts a success)', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ timeoutMs: 100 }, new ManualClock());
    withCircuitBreaker(http, { breaker });

    const error = (await rejectionOf(
      http.get('/status/302?location=%2Fok', { maxRedirects: 0 }),
    )) as AxiosError;

    expect(error.response?.status).toBe(302);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 1, successes: 1 });
  });

  it("aborts the redirect's second hop at the deadline", async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 100 }, clock);
    withCircuitBreaker(http, { breaker });

    const answer = rejectionOf(http.get('/status/302?location=%2Fhang'));
    await server.received(2);
    clock.advance(100);

    expect(await answer).toBeInstanceOf(CallTimeoutError);
    await server.abandonedBy(1);
    expect(breaker.snapshot().totals.timeouts).toBe(1);
  });
});

describe('probes', () => {
  it('a probe past halfOpen.probeTimeoutMs is aborted and fails; the breaker opens again', async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf(
      {
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        timeoutMs: false,
        halfOpen: { probeTimeoutMs: 200 },
      },
      clock,
    );
    withCircuitBreaker(http, { breaker });

    await rejectionOf(http.get('/fail'));
    clock.advance(1_000);
    const probe = rejectionOf(http.get('/hang'));
    await server.received(2);
    clock.advance(200);

    expect(await probe).toBeInstanceOf(CallTimeoutError);
    await server.abandonedBy(1);
    expect(breaker.state).toBe('open');
    expect(await rejectionOf(http.get('/ok'))).toBeInstanceOf(CallRejectedError);
  });

  it("a probe abandoned (halfOpen.maxWaitMs) during a fault's latency settles its caller, sends nothing", async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = breakerOf(
      {
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        timeoutMs: false,
        halfOpen: { maxWaitMs: 300 },
      },
      clock,
      true,
    );
    withCircuitBreaker(http, { breaker });

    await rejectionOf(http.get('/fail'));
    clock.advance(1_000);
    breaker.injectFault({ latencyMs: 10_000 });
    const probe = rejectionOf(http.get('/ok'));
    await settled();
    clock.advance(300);
    const next = await rejectionOf(http.get('/ok'));

    expect(await probe).toBeInstanceOf(CallTimeoutError);
    expect(next).toBeInstanceOf(CallRejectedError);
    clock.advance(10_000);
    await settled();
    expect(server.requests).toBe(1);
  });
});

// On execute() (before 331c02e) both carried the cancel; the permit path releases its permit with it.
describe('what observers of a cancelled request see', () => {
  it("a cancel during a fault's latency: the ignored event carries the token's reason", async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ timeoutMs: 1_000 }, new ManualClock(), true);
    breaker.injectFault({ latencyMs: 500 });
    withCircuitBreaker(http, { breaker });
    const errors: unknown[] = [];
    breaker.on('ignored', ({ error }) => errors.push(error));
    const source = axios.CancelToken.source();

    const answer = rejectionOf(http.get('/ok', { cancelToken: source.token }));
    await settled();
    source.cancel('gone');
    const error = await answer;

    expect(errors).toEqual([error]);
    expect((error as Error).message).toBe('gone');
    expect(server.requests).toBe(0);
  });

  it("the ignored event of a request its caller cancelled carries the caller's cancel, as execute() gave it", async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ timeoutMs: 1_000 }, new ManualClock());
    withCircuitBreaker(http, { breaker });
    const errors: unknown[] = [];
    breaker.on('ignored', ({ error }) => errors.push(error));
    const source = axios.CancelToken.source();

    const answer = rejectionOf(http.get('/hang', { cancelToken: source.token }));
    await server.received(1);
    source.cancel('gone');
    const error = await answer;

    expect(axios.isCancel(error)).toBe(true);
    expect(errors).toHaveLength(1);
    expect(axios.isCancel(errors[0])).toBe(true);
  });

  it('call-settle of a request its caller cancelled carries the CanceledError, as execute() published it', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = new Breaker(
      'upstream',
      { timeoutMs: 1_000 },
      { clock: new ManualClock(), channels: breakerChannels() },
    );
    withCircuitBreaker(http, { breaker });
    const settles: Record<string, unknown>[] = [];
    const onSettle = (message: unknown): void => {
      settles.push({ ...(message as object) });
    };
    subscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle);
    cleanups.push(() => unsubscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle));
    const source = axios.CancelToken.source();

    const answer = rejectionOf(http.get('/hang', { cancelToken: source.token }));
    await server.received(1);
    source.cancel('gone');
    await answer;
    await settled();

    expect(settles).toHaveLength(1);
    expect(axios.isCancel(settles[0]!.error)).toBe(true);
  });
});

describe("responseType 'stream'", () => {
  it("the caller's own signal still aborts the body after the headers, as it does without the breaker", async () => {
    const { url, clientGone } = await holdingUpstream();
    const http = client(url);
    const breaker = breakerOf({ timeoutMs: 1_000 }, new ManualClock());
    withCircuitBreaker(http, { breaker });
    const controller = new AbortController();

    const response = await http.get<Readable>('/', {
      responseType: 'stream',
      signal: controller.signal,
    });
    const body = response.data;
    const failed = new Promise<unknown>((resolve) => body.on('error', resolve));
    body.resume();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();

    expect(body.destroyed).toBe(true);
    expect(axios.isCancel(await failed)).toBe(true);
    await clientGone;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 1, successes: 1 });
  });

  it('lets go of the caller’s signal once a streamed body has been read to its end', async () => {
    const server = await upstream();
    const http = client(server.url);
    const breaker = breakerOf({ timeoutMs: 1_000 }, new ManualClock());
    withCircuitBreaker(http, { breaker });
    const controller = new AbortController();

    const response = await http.get<Readable>('/ok', {
      responseType: 'stream',
      signal: controller.signal,
    });
    const chunks: Buffer[] = [];
    for await (const chunk of response.data) chunks.push(chunk as Buffer);

    expect(Buffer.concat(chunks).toString()).toBe('{"status":200}');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe("a per-key family's probe rides on a child's request", () => {
  async function halfOpenFamily(): Promise<{
    http: AxiosInstance;
    family: Breaker;
    clock: ManualClock;
    server: CountingServer;
  }> {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const family = breakerOf(
      {
        perKey: { maxKeys: 10 },
        aggregate: { openWhenOpenRatio: 0.5, minKeys: 4 },
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        timeoutMs: 100,
      },
      clock,
    );
    withCircuitBreaker(http, { breaker: family, key: (config) => config.url!.split('?k=')[1] });
    for (const key of ['a', 'b', 'c', 'd']) await http.get(`/ok?k=${key}`);
    await rejectionOf(http.get('/fail?k=a'));
    await rejectionOf(http.get('/fail?k=b'));
    expect(family.state).toBe('open');
    clock.advance(1_000);
    return { http, family, clock, server };
  }

  it("the child's deadline fails the family's probe too: the family opens again", async () => {
    const { http, family, clock, server } = await halfOpenFamily();

    const answer = rejectionOf(http.get('/hang?k=d'));
    await server.received(7);
    clock.advance(100);

    expect(await answer).toBeInstanceOf(CallTimeoutError);
    expect(family.state).toBe('open');
    expect(family.forKey('d').snapshot().totals.timeouts).toBe(1);
  });

  it("the caller's cancel gives the family's probe permit back: the next request probes", async () => {
    const { http, family, server } = await halfOpenFamily();
    const source = axios.CancelToken.source();

    const answer = rejectionOf(http.get('/hang?k=d', { cancelToken: source.token }));
    await server.received(7);
    source.cancel('gone');

    expect(axios.isCancel(await answer)).toBe(true);
    expect(family.snapshot().halfOpen).toMatchObject({ probesAdmitted: 0 });
    expect((await http.get('/ok?k=c')).status).toBe(200);
    expect(family.state).toBe('closed');
  });
});
