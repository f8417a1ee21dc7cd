import axios from 'axios';
import { describe, expect, it } from 'vitest';
import { withCircuitBreaker } from '../../lib/axios/index.js';
import { Breaker } from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/index.js';
import { holdingUpstream } from './axios-fixtures.js';

// Requests to any adapter but axios' own (its fetch adapter here) go through breaker.execute(),
// with the call's own AbortSignal on a copy of their config.

describe("a request through axios' fetch adapter", () => {
  it("the caller's own signal still aborts a streamed body after the headers, as it does without the breaker", async () => {
    const { url, clientGone } = await holdingUpstream();
    const http = axios.create({ baseURL: url, adapter: 'fetch' });
    const breaker = new Breaker('upstream', { timeoutMs: 1_000 }, { clock: new ManualClock() });
    withCircuitBreaker(http, { breaker });
    const controller = new AbortController();

    const response = await http.get<ReadableStream<Uint8Array>>('/', {
      responseType: 'stream',
      signal: controller.signal,
    });
    const reader = response.data.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first');
    controller.abort();

    const ended = await reader.read().then(
      () => 'read on',
      (error: unknown) => (error as Error).name,
    );
    expect(ended).toBe('CanceledError');
    await clientGone;
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 1, successes: 1 });
  });
});
