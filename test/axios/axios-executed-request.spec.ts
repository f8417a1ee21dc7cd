import axios from 'axios';
import { describe, expect, it } from 'vitest';
import { withCircuitBreaker } from '../../lib/axios/index.js';
import { Breaker, CallTimeoutError } from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import { holdingUpstream, rejectionOf, upstream } from './axios-fixtures.js';

// Requests to any adapter but axios' own (its fetch adapter here) go through breaker.execute(),
// with the call's own AbortSignal on a copy of their config.

describe("a request through axios' fetch adapter", () => {
  // Its own signal does not reach the body: the adapter gets the call's, which the breaker lets go of at the
  // headers (docs/axios.md). Joining the two with AbortSignal.any() would leak on Node 20 for a caller signal
  // reused across requests (nodejs/node#55351).
  it('a cancelToken still cancels a streamed body after the headers, as it does without the breaker', async () => {
    const { url, clientGone } = await holdingUpstream();
    const http = axios.create({ baseURL: url, adapter: 'fetch' });
    const breaker = new Breaker('upstream', { timeoutMs: 1_000 }, { clock: new ManualClock() });
    withCircuitBreaker(http, { breaker });
    const source = axios.CancelToken.source();

    const response = await http.get<ReadableStream<Uint8Array>>('/', {
      responseType: 'stream',
      cancelToken: source.token,
    });
    const reader = response.data.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first');
    source.cancel();

    const ended = await reader.read().then(
      () => 'read on',
      (error: unknown) => (error as Error).name,
    );
    expect(ended).toBe('CanceledError');
    await clientGone;
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 1, successes: 1 });
  });

  it("a streamed request with the caller's signal still times out at the deadline, aborted", async () => {
    const server = await upstream();
    const http = axios.create({ baseURL: server.url, adapter: 'fetch' });
    const clock = new ManualClock();
    const breaker = new Breaker('upstream', { timeoutMs: 100 }, { clock });
    withCircuitBreaker(http, { breaker });

    const pending = rejectionOf(
      http.get('/hang', { responseType: 'stream', signal: new AbortController().signal }),
    );
    await server.received(1);
    clock.advance(100);
    expect(await pending).toBeInstanceOf(CallTimeoutError);
    await server.abandonedBy(1);
    expect(server.abandoned).toBe(1);
    expect(breaker.snapshot().totals.timeouts).toBe(1);
  });
});

describe('an adapter of yours, on the execute() path', () => {
  /** An adapter that records the signal it is given and never answers. */
  function recording(): { seen: AbortSignal[]; http: ReturnType<typeof axios.create> } {
    const seen: AbortSignal[] = [];
    const http = axios.create({
      baseURL: 'http://127.0.0.1:9',
      adapter: (config) => {
        seen.push(config.signal as AbortSignal);
        return new Promise(() => {});
      },
    });
    return { seen, http };
  }

  it("a streamed request's signal aborts with the breaker's CallTimeoutError at the deadline", async () => {
    const { seen, http } = recording();
    const clock = new ManualClock();
    withCircuitBreaker(http, { breaker: new Breaker('upstream', { timeoutMs: 100 }, { clock }) });
    const caller = new AbortController();

    const pending = rejectionOf(http.get('/', { responseType: 'stream', signal: caller.signal }));
    clock.advance(100);
    const error = await pending;
    expect(error).toBeInstanceOf(CallTimeoutError);
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toBe(caller.signal);
    expect(seen[0]!.aborted).toBe(true);
    expect(seen[0]!.reason).toBe(error);
    expect(caller.signal.aborted).toBe(false);
  });

  it("a streamed request's signal aborts with the caller's reason, which the caller gets", async () => {
    const { seen, http } = recording();
    withCircuitBreaker(http, {
      breaker: new Breaker('upstream', { timeoutMs: 100 }, { clock: new ManualClock() }),
    });
    const caller = new AbortController();

    const pending = rejectionOf(http.get('/', { responseType: 'stream', signal: caller.signal }));
    const reason = new Error('gone');
    caller.abort(reason);
    const error = (await pending) as Error;
    expect(error.name).toBe('CanceledError');
    expect(seen[0]!.aborted).toBe(true);
    expect(seen[0]!.reason).toBe(reason);
  });

  it('a caller signal aborted already sends no request', async () => {
    const { seen, http } = recording();
    withCircuitBreaker(http, {
      breaker: new Breaker('upstream', { timeoutMs: 100 }, { clock: new ManualClock() }),
    });
    const caller = new AbortController();
    caller.abort();

    const error = (await rejectionOf(
      http.get('/', { responseType: 'stream', signal: caller.signal }),
    )) as Error;
    expect(error.name).toBe('CanceledError');
    expect(seen).toEqual([]);
  });

  it("a request not streamed gets the call's own signal, not one joined to the caller's", async () => {
    const { seen, http } = recording();
    const clock = new ManualClock();
    withCircuitBreaker(http, { breaker: new Breaker('upstream', { timeoutMs: 100 }, { clock }) });
    const caller = new AbortController();

    const pending = rejectionOf(http.get('/', { signal: caller.signal }));
    clock.advance(100);
    const error = await pending;
    expect(error).toBeInstanceOf(CallTimeoutError);
    expect(seen[0]!.reason).toBe(error);
    caller.abort();
    expect(seen[0]!.reason).toBe(error);
  });
});
