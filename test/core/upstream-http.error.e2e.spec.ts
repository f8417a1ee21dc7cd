import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Breaker,
  CallRejectedError,
  ensureOk,
  httpStatusOf,
  retryAfterOf,
  UpstreamHttpError,
} from '../../lib/index.js';

/** A real dependency: GET /<status>?retryAfter=<value>&header=<name:value>&size=<bytes> answers that status. */
let server: Server;
let base: string;
let requests = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    const url = new URL(req.url ?? '/', 'http://upstream');
    const status = Number(url.pathname.slice(1));
    const retryAfter = url.searchParams.get('retryAfter');
    if (retryAfter !== null) res.setHeader('Retry-After', retryAfter);
    for (const header of url.searchParams.getAll('header')) {
      const colon = header.indexOf(':');
      res.setHeader(header.slice(0, colon), header.slice(colon + 1));
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    const size = Number(url.searchParams.get('size') ?? 0);
    res.end(size > 0 ? 'x'.repeat(size) : JSON.stringify({ message: `answered ${status}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const breaker = (name: string) =>
  new Breaker(name, {
    window: { type: 'count', size: 4 },
    minimumThroughput: 2,
    failureRateThreshold: 0.5,
  });

describe('fetch through a breaker: the natural error loses the status, ensureOk() keeps it', () => {
  it('throw new Error() on !res.ok turns two 429s into an open breaker: the dependency only asked for back-off', async () => {
    const natural = breaker('natural');
    for (let i = 0; i < 2; i++) {
      await expect(
        natural.execute(async ({ signal }) => {
          const res = await fetch(`${base}/429?retryAfter=2`, { signal });
          if (!res.ok) throw new Error(`upstream answered ${res.status}`);
          return res.json();
        }),
      ).rejects.toThrow('upstream answered 429');
    }
    expect(natural.state).toBe('open');
  });

  it('ensureOk() keeps 429 + Retry-After: the breaker pauses for 2 s and stays closed, and the dependency sees no more calls', async () => {
    const pricing = breaker('pricing');
    const call = () =>
      pricing.execute(async ({ signal }) =>
        (await ensureOk(await fetch(`${base}/429?retryAfter=2`, { signal }))).json(),
      );
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 2_000 });
    const before = requests;
    const paused = await call().catch((e: unknown) => e);
    expect(paused).toBeInstanceOf(CallRejectedError);
    expect(paused).toMatchObject({ reason: 'retry-after', state: 'closed' });
    expect((paused as CallRejectedError).retryAfterMs).toBeGreaterThan(1_900);
    expect(requests).toBe(before);
    expect(pricing.state).toBe('closed');
    expect(pricing.snapshot().totals).toMatchObject({ overloads: 1, failures: { total: 0 } });
  });

  it('a 503 with an HTTP-date Retry-After is overload; without one it is a failure; a 404 is a success', async () => {
    const now = Date.parse('Tue, 01 Dec 2026 10:00:00 GMT');
    const dated = await UpstreamHttpError.from(
      await fetch(`${base}/503?retryAfter=${encodeURIComponent('Tue, 01 Dec 2026 10:00:30 GMT')}`),
      { now },
    );
    expect(dated.retryAfterMs).toBe(30_000);
    // One breaker per answer: the first one's pause would reject the others.
    const outcome = async (path: string) => {
      const counted = breaker(path);
      await counted
        .execute(async () => ensureOk(await fetch(`${base}${path}`)))
        .catch(() => undefined);
      const { overloads, successes, failures } = counted.snapshot().totals;
      return overloads === 1
        ? 'overload'
        : successes === 1
          ? 'success'
          : failures.total === 1
            ? 'failure'
            : 'none';
    };
    expect(await outcome('/503?retryAfter=1')).toBe('overload');
    expect(await outcome('/503')).toBe('failure');
    expect(await outcome('/404')).toBe('success');
    expect(await outcome('/400')).toBe('success');
    expect(await outcome('/500')).toBe('failure');
  });
});

describe('UpstreamHttpError', () => {
  it('carries status, status text, Retry-After, the URL without query or credentials, and the body; the classification reads them', async () => {
    const error = await UpstreamHttpError.from(
      await fetch(`${base}/429?retryAfter=7&apiKey=secret#frag`),
    );
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('UpstreamHttpError');
    expect(error.code).toBe('UPSTREAM_HTTP');
    expect(error.status).toBe(429);
    expect(error.statusText).toBe('Too Many Requests');
    expect(error.url).toBe(`${base}/429`);
    expect(error.message).toBe(`Upstream ${base}/429 answered 429 Too Many Requests.`);
    expect(error.retryAfterMs).toBe(7_000);
    expect(error.bodyExcerpt).toBe('{"message":"answered 429"}');
    expect(httpStatusOf(error)).toBe(429);
    expect(retryAfterOf(error, Date.now())).toBe(7_000);
    const withCredentials = await UpstreamHttpError.from(new Response('', { status: 500 }));
    expect(withCredentials.url).toBe('');
    expect(withCredentials.message).toBe('The upstream answered 500.');
  });

  it('carries the pause hints that LLM APIs and IETF rate limiters send, read from the real response', async () => {
    const hinted = async (...headers: string[]) =>
      (
        await UpstreamHttpError.from(
          await fetch(
            `${base}/429?${headers.map((h) => `header=${encodeURIComponent(h)}`).join('&')}`,
          ),
        )
      ).retryAfterMs;
    expect(await hinted('retry-after-ms:1500', 'Retry-After:2')).toBe(1_500);
    expect(await hinted('x-ms-retry-after-ms:250')).toBe(250);
    expect(await hinted('RateLimit:"default";r=0;t=30')).toBe(30_000);
    expect(await hinted('RateLimit-Reset:4', 'RateLimit-Remaining:0')).toBe(4_000);
    expect(await hinted('retry-after-ms:Infinity')).toBeUndefined();
  });

  it('reads only the start of a large body: an excerpt of at most 500 characters', async () => {
    const error = await UpstreamHttpError.from(await fetch(`${base}/500?size=1000000`));
    expect(error.bodyExcerpt).toHaveLength(500);
    expect(error.bodyExcerpt.endsWith('…')).toBe(true);
  });

  it('never rejects: a body that breaks while read, or was already read, gives an empty excerpt', async () => {
    const broken = new Response(
      new ReadableStream({ pull: (controller) => controller.error(new Error('socket hang up')) }),
      { status: 502 },
    );
    expect((await UpstreamHttpError.from(broken)).bodyExcerpt).toBe('');
    const used = new Response('read already', { status: 500 });
    await used.text();
    expect(await UpstreamHttpError.from(used)).toMatchObject({ status: 500, bodyExcerpt: '' });
  });

  it('ensureOk() returns a 2xx response untouched, its body still readable', async () => {
    const res = await ensureOk(await fetch(`${base}/200`));
    expect(await res.json()).toEqual({ message: 'answered 200' });
  });
});
