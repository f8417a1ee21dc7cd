import axios from 'axios';
import { describe, expect, it } from 'vitest';
import { withCircuitBreaker } from '../../lib/axios/index.js';
import { Breaker, CallRejectedError, CallTimeoutError } from '../../lib/core/index.js';
import type { BreakerOptions } from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import { upstream, client, rejectionOf, settled } from './axios-fixtures.js';

// Requests to axios' own http adapter go out under a permit, without breaker.execute() around them:
// what the breaker decides reaches the request through its signal, and the caller through the adapter.

function faulty(options: BreakerOptions, clock: ManualClock): Breaker {
  return new Breaker('upstream', options, { clock, faultInjection: true });
}

describe('a request to axios’ own adapter, under a permit', () => {
  it('a half-open probe the breaker gives up on (halfOpen.maxWaitMs) is aborted: the server sees its socket close', async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = new Breaker(
      'upstream',
      {
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        timeoutMs: false,
        halfOpen: { maxWaitMs: 300 },
      },
      { clock },
    );
    withCircuitBreaker(http, { breaker });

    await rejectionOf(http.get('/fail'));
    clock.advance(1_000);
    const probe = rejectionOf(http.get('/hang'));
    await server.received(2);
    clock.advance(300);
    // The breaker gives up on the probe when the next call asks (no timer of its own).
    const next = await rejectionOf(http.get('/ok'));

    expect(await probe).toBeInstanceOf(CallTimeoutError);
    await server.abandonedBy(1);
    expect(next).toBeInstanceOf(CallRejectedError);
    expect(breaker.snapshot().totals.probes.failed).toBe(1);
    expect(server.requests).toBe(2);
  });

  it("ends a fault's latency at the deadline with CallTimeoutError, and sends nothing", async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = faulty({ timeoutMs: 100 }, clock);
    breaker.injectFault({ latencyMs: 5_000 });
    withCircuitBreaker(http, { breaker });

    const answer = rejectionOf(http.get('/ok'));
    await settled();
    clock.advance(100);
    const error = await answer;
    clock.advance(5_000);
    await settled();

    expect(error).toBeInstanceOf(CallTimeoutError);
    expect([server.requests, breaker.snapshot().totals.timeouts]).toEqual([0, 1]);
  });

  it.each(['cancelToken', 'signal'] as const)(
    "hears the caller's cancel (%s) during a fault's latency at once: axios' CanceledError, ignored, nothing sent",
    async (how) => {
      const server = await upstream();
      const http = client(server.url);
      const clock = new ManualClock();
      const breaker = faulty({ timeoutMs: 10_000 }, clock);
      breaker.injectFault({ latencyMs: 5_000 });
      withCircuitBreaker(http, { breaker });
      const source = axios.CancelToken.source();
      const controller = new AbortController();

      const answer = rejectionOf(
        http.get(
          '/ok',
          how === 'cancelToken' ? { cancelToken: source.token } : { signal: controller.signal },
        ),
      );
      await settled();
      if (how === 'cancelToken') source.cancel('not needed');
      else controller.abort();
      // No time passes: the latency does not have to end first.
      const error = await answer;
      clock.advance(5_000);
      await settled();

      expect(axios.isCancel(error)).toBe(true);
      if (how === 'cancelToken') expect((error as Error).message).toBe('not needed');
      expect(server.requests).toBe(0);
      expect(breaker.snapshot().totals).toMatchObject({ ignored: 1, admitted: 1 });
      expect(breaker.snapshot().totals.failures.total).toBe(0);
    },
  );

  it("sends the request after a fault's latency, and counts its answer", async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = faulty({ timeoutMs: 10_000 }, clock);
    breaker.injectFault({ latencyMs: 500 });
    withCircuitBreaker(http, { breaker });

    const answer = http.get('/ok');
    await settled();
    expect(server.requests).toBe(0);
    clock.advance(500);

    expect((await answer).status).toBe(200);
    expect(breaker.snapshot().totals.successes).toBe(1);
  });
});

describe('a request that may wait for a bulkhead slot', () => {
  it('waits for the slot, and leaves the queue when its caller cancels it, unsent', async () => {
    const server = await upstream();
    const http = client(server.url);
    const clock = new ManualClock();
    const breaker = new Breaker(
      'upstream',
      { timeoutMs: 1_000, bulkhead: { maxConcurrent: 1, maxQueue: 2, queueTimeoutMs: 500 } },
      { clock },
    );
    withCircuitBreaker(http, { breaker });
    const source = axios.CancelToken.source();
    const firstSource = axios.CancelToken.source();

    const first = rejectionOf(http.get('/hang', { cancelToken: firstSource.token }));
    await server.received(1);
    const cancelled = rejectionOf(http.get('/ok', { cancelToken: source.token }));
    const waiting = http.get('/ok');
    await settled();
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 2 });
    source.cancel('gone');
    expect(axios.isCancel(await cancelled)).toBe(true);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 1 });

    firstSource.cancel('done');
    expect(axios.isCancel(await first)).toBe(true);
    expect((await waiting).status).toBe(200);
    expect(server.paths).toEqual(['/hang', '/ok']);
  });
});
