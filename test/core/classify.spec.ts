import {
  BadRequestException,
  HttpException,
  InternalServerErrorException,
  NotFoundException,
} from '@nestjs/common';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  defaultClassifyError,
  defaultClassifyResult,
  httpStatusOf,
  parseRetryAfter,
  retryAfterOf,
} from '../../lib/core/index.js';
import { failureCategoryOf } from '../../lib/core/classify/classify.js';
import { httpError } from '../helpers/http-error.js';
import { ManualClock } from '../helpers/manual-clock.js';

const nodeError = (code: string) => Object.assign(new Error(code), { code });

describe('default classification', () => {
  it.each([
    ['Nest InternalServerErrorException', new InternalServerErrorException(), 'failure'],
    ['Nest BadRequestException', new BadRequestException(), 'success'],
    ['Nest NotFoundException', new NotFoundException(), 'success'],
    ['axios 500', httpError(500), 'failure'],
    ['axios 502', httpError(502), 'failure'],
    ['axios 408', httpError(408), 'failure'],
    ['axios 400', httpError(400), 'success'],
    ['axios 404', httpError(404), 'success'],
    ['axios 429', httpError(429), 'overload'],
    ['axios 503 without Retry-After', httpError(503), 'failure'],
    ['axios 503 with Retry-After', httpError(503, { 'retry-after': '5' }), 'overload'],
    ['http-errors statusCode 500', Object.assign(new Error('x'), { statusCode: 500 }), 'failure'],
    ['http-errors status 422', Object.assign(new Error('x'), { status: 422 }), 'success'],
    [
      'got response.statusCode 504',
      Object.assign(new Error('x'), { response: { statusCode: 504 } }),
      'failure',
    ],
    ['ECONNREFUSED', nodeError('ECONNREFUSED'), 'failure'],
    ['ENOTFOUND', nodeError('ENOTFOUND'), 'failure'],
    [
      'undici connect timeout under fetch',
      Object.assign(new TypeError('fetch failed'), { cause: nodeError('UND_ERR_CONNECT_TIMEOUT') }),
      'failure',
    ],
    ['AbortSignal.timeout', new DOMException('timed out', 'TimeoutError'), 'failure'],
    ['an unknown error', new Error('what'), 'failure'],
    ['a thrown string', 'oops', 'failure'],
  ])('%s → %s', (_label, error, expected) => {
    expect(defaultClassifyError(error)).toBe(expected);
  });

  it('with overload off, 429 and 503 + Retry-After are failures', () => {
    expect(defaultClassifyError(httpError(429), false)).toBe('failure');
    expect(defaultClassifyError(httpError(503, { 'retry-after': '5' }), false)).toBe('failure');
  });

  it('classifies resolved HTTP responses by status, and any other value as success', () => {
    expect(defaultClassifyResult(new Response('', { status: 503 }))).toBe('failure');
    expect(
      defaultClassifyResult(new Response('', { status: 503, headers: { 'Retry-After': '1' } })),
    ).toBe('overload');
    expect(defaultClassifyResult(new Response('', { status: 429 }))).toBe('overload');
    expect(defaultClassifyResult(new Response('', { status: 404 }))).toBe('success');
    expect(defaultClassifyResult({ status: 500, headers: {}, data: null, config: {} })).toBe(
      'failure',
    );
    expect(defaultClassifyResult({ status: 500 })).toBe('success'); // a domain object, not a response
    expect(defaultClassifyResult(1)).toBe('success');
    expect(defaultClassifyResult(null)).toBe('success');
  });

  it('reads the headers of a resolved value only when its status can fail', () => {
    const reads: number[] = [];
    const response = (status: number, headers: () => unknown) => ({
      status,
      get headers() {
        reads.push(status);
        return headers();
      },
    });
    const throwing = () => {
      throw new Error('unreadable');
    };
    // A success status is a success whatever the headers: not read, not even when reading them throws.
    expect(defaultClassifyResult(response(200, () => ({})))).toBe('success');
    expect(defaultClassifyResult(response(404, throwing))).toBe('success');
    expect(reads).toEqual([]);
    // A status that can fail needs them: is it a response, and does a 503 ask for a pause?
    expect(defaultClassifyResult(response(500, () => ({})))).toBe('failure');
    expect(defaultClassifyResult(response(503, () => ({ 'retry-after': '1' })))).toBe('overload');
    expect(defaultClassifyResult(response(502, throwing))).toBe('failure');
    expect(defaultClassifyResult(response(429, () => undefined))).toBe('success');
    expect(reads).toEqual([500, 503, 503, 502, 429]);
  });

  it('finds the status where each client puts it', () => {
    expect(httpStatusOf(new HttpException('x', 418))).toBe(418);
    expect(httpStatusOf(httpError(502))).toBe(502);
    expect(httpStatusOf({ statusCode: 301 })).toBe(301);
    expect(httpStatusOf({ status: 'nope' })).toBeUndefined();
    expect(httpStatusOf({ status: 1000 })).toBeUndefined();
  });

  it('names failure categories for metrics', () => {
    expect(failureCategoryOf(new CallTimeoutError('x', 5))).toBe('timeout');
    expect(failureCategoryOf(nodeError('ETIMEDOUT'))).toBe('timeout');
    expect(failureCategoryOf(nodeError('ECONNRESET'))).toBe('connection');
    expect(
      failureCategoryOf(
        Object.assign(new TypeError('fetch failed'), { cause: nodeError('UND_ERR_SOCKET') }),
      ),
    ).toBe('connection');
    expect(failureCategoryOf(httpError(500))).toBe('server');
    expect(failureCategoryOf(httpError(408))).toBe('timeout');
    expect(failureCategoryOf(new Error('?'))).toBe('other');
  });

  it('names the categories of gRPC statuses as of their HTTP counterparts', () => {
    const grpc = (code: number) =>
      Object.assign(new Error(`${code}`), { code, details: 'x', metadata: {} });
    // UNKNOWN, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS.
    expect([2, 4, 8, 12, 13, 14, 15].map((code) => failureCategoryOf(grpc(code)))).toEqual([
      'server',
      'timeout',
      'server',
      'server',
      'server',
      'connection',
      'server',
    ]);
    // The metadata alone marks a gRPC error too (a ServiceError without details).
    expect(failureCategoryOf({ code: 4, metadata: {} })).toBe('timeout');
    // A bare numeric code (a database driver's) is not a gRPC status.
    expect(failureCategoryOf(Object.assign(new Error('dup'), { code: 14 }))).toBe('other');
    expect(failureCategoryOf({ code: 17, details: 'x' })).toBe('other');
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');

  it('parses delta-seconds and HTTP-dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sun, 29 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 29 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBe(1_500);
    // Date.parse alone reads these as dates of 2001: they are no HTTP-date.
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('+1', now)).toBeUndefined();
    expect(parseRetryAfter('1e+297', now)).toBeUndefined();
    expect(parseRetryAfter('9'.repeat(300), now)).toBe(2_147_483_647);
  });

  it('reads the hint from axios, fetch, http-errors, Nest exceptions and retryAfterMs', () => {
    expect(retryAfterOf(httpError(503, { 'retry-after': '3' }), now)).toBe(3_000);
    expect(
      retryAfterOf(new Response('', { status: 429, headers: { 'Retry-After': '4' } }), now),
    ).toBe(4_000);
    expect(retryAfterOf(Object.assign(new Error(), { headers: { 'retry-after': '5' } }), now)).toBe(
      5_000,
    );
    expect(retryAfterOf(new HttpException({ message: 'slow down', retryAfter: 6 }, 429), now)).toBe(
      6_000,
    );
    expect(retryAfterOf(new HttpException({ retryAfterMs: 700 }, 503), now)).toBe(700);
    expect(retryAfterOf(Object.assign(new Error(), { retryAfterMs: 800 }), now)).toBe(800);
    expect(
      retryAfterOf(
        { response: { headers: { get: (h: string) => (h === 'retry-after' ? '9' : null) } } },
        now,
      ),
    ).toBe(9_000);
    expect(retryAfterOf(new Error('plain'), now)).toBeUndefined();
  });

  it('a hint that is no finite number of milliseconds is no hint', () => {
    // Digits are a long wait however many there are (RFC 9111 reads one too large to hold as the
    // largest it can): capped, not refused, whether or not a double holds them.
    expect(parseRetryAfter('9'.repeat(400), now)).toBe(2_147_483_647);
    expect(parseRetryAfter('9'.repeat(300), now)).toBe(2_147_483_647);
    expect(retryAfterOf(httpError(503, { 'retry-after': '9'.repeat(400) }), now)).toBe(
      2_147_483_647,
    );
    expect(
      retryAfterOf(Object.assign(new Error(), { retryAfterMs: Infinity }), now),
    ).toBeUndefined();
    expect(retryAfterOf(Object.assign(new Error(), { retryAfterMs: NaN }), now)).toBeUndefined();
    expect(retryAfterOf(new HttpException({ retryAfterMs: Infinity }, 503), now)).toBeUndefined();
  });
});

describe('rate-limit hints of the common APIs', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  const hint = (headers: Record<string, string>) => retryAfterOf(httpError(429, headers), now);

  it('reads retry-after-ms and x-ms-retry-after-ms (OpenAI, Anthropic, Azure) before Retry-After, rounded up', () => {
    expect(hint({ 'retry-after-ms': '1500' })).toBe(1_500);
    expect(hint({ 'retry-after-ms': '20.25', 'retry-after': '1' })).toBe(21);
    expect(hint({ 'x-ms-retry-after-ms': '750' })).toBe(750);
    expect(hint({ 'x-ms-retry-after-ms': '750', 'retry-after-ms': '900' })).toBe(900);
    expect(
      retryAfterOf(
        new Response('', { status: 429, headers: { 'Retry-After-Ms': '420', 'Retry-After': '9' } }),
        now,
      ),
    ).toBe(420);
    // A hand-built plain object may hold the names in any case.
    expect(retryAfterOf({ headers: { 'X-Ms-Retry-After-Ms': '33' } }, now)).toBe(33);
  });

  it('reads the IETF RateLimit field: the longest reset of an exhausted quota, or the older reset= form', () => {
    expect(hint({ ratelimit: '"default";r=0;t=30' })).toBe(30_000);
    expect(hint({ ratelimit: '"100-in-1min"; r=0; t=60' })).toBe(60_000);
    expect(hint({ ratelimit: '"burst";r=0;t=2, "daily";r=0;t=3600, "hourly";r=5;t=9000' })).toBe(
      3_600_000,
    );
    expect(hint({ ratelimit: '"default";r=12;t=30' })).toBeUndefined();
    expect(hint({ ratelimit: 'limit=100, remaining=0, reset=7' })).toBe(7_000);
    expect(hint({ ratelimit: 'limit=100, remaining=3, reset=7' })).toBeUndefined();
    expect(hint({ 'ratelimit-reset': '5' })).toBe(5_000);
    expect(hint({ 'ratelimit-reset': '5', 'ratelimit-remaining': '0' })).toBe(5_000);
    expect(hint({ 'ratelimit-reset': '5', 'ratelimit-remaining': '40' })).toBeUndefined();
    // Retry-After says exactly when: it wins over a quota's reset.
    expect(hint({ 'retry-after': '2', ratelimit: '"default";r=0;t=30' })).toBe(2_000);
  });

  it('ignores hostile values (NaN, Infinity, negative, exponents, dates in disguise) and caps huge ones', () => {
    for (const bad of [
      'NaN',
      'Infinity',
      '-Infinity',
      '-5',
      '1e+297',
      '0x10',
      '',
      ' ',
      '+1',
      '1.5.2',
    ])
      for (const name of [
        'retry-after-ms',
        'x-ms-retry-after-ms',
        'retry-after',
        'ratelimit-reset',
      ])
        expect([name, bad, hint({ [name]: bad })]).toEqual([name, bad, undefined]);
    expect(hint({ ratelimit: '"default";r=0;t=Infinity' })).toBeUndefined();
    expect(hint({ ratelimit: '"default";r=0;t=-1' })).toBeUndefined();
    expect(hint({ ratelimit: 'limit=1, remaining=0, reset=NaN' })).toBeUndefined();
    expect(hint({ 'retry-after': '9'.repeat(300) })).toBe(2_147_483_647);
    expect(hint({ 'retry-after': '9'.repeat(400) })).toBe(2_147_483_647);
    expect(hint({ 'retry-after-ms': '9'.repeat(400) })).toBe(2_147_483_647);
    expect(hint({ 'retry-after-ms': '1'.repeat(40) })).toBe(2_147_483_647);
    expect(retryAfterOf({ retryAfterMs: 1e300 }, now)).toBe(2_147_483_647);
    expect(retryAfterOf({ retryAfterMs: Number.POSITIVE_INFINITY }, now)).toBeUndefined();
    expect(retryAfterOf({ retryAfterMs: Number.NaN }, now)).toBeUndefined();
    expect(retryAfterOf({ retryAfterMs: -1 }, now)).toBeUndefined();
    // A garbage hint gives way to the next one that can be read.
    expect(hint({ 'retry-after-ms': 'NaN', 'retry-after': '4' })).toBe(4_000);
  });

  it('never answers a pause that is not a finite number of ms in [0, 2^31-1] (fast-check, fixed seed)', () => {
    const names = [
      'retry-after-ms',
      'x-ms-retry-after-ms',
      'retry-after',
      'ratelimit',
      'ratelimit-reset',
    ];
    const junk = fc.oneof(
      fc.string(),
      fc.double().map(String),
      fc.bigInt().map(String),
      fc
        .constantFrom('"q";r=0;t=', 'limit=1, remaining=0, reset=')
        .chain((prefix) => fc.oneof(fc.double(), fc.bigInt()).map((n) => prefix + String(n))),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), junk), fc.anything(), (headers, own) => {
        for (const value of [
          httpError(429, headers),
          { headers, retryAfterMs: own },
          new HttpException({ retryAfterMs: own, retryAfter: headers['retry-after'] }, 429),
        ]) {
          const ms = retryAfterOf(value, now);
          if (ms !== undefined) {
            expect(Number.isInteger(ms)).toBe(true);
            expect(ms).toBeGreaterThanOrEqual(0);
            expect(ms).toBeLessThanOrEqual(2_147_483_647);
          }
        }
      }),
      { seed: 7_2026, numRuns: 300 },
    );
  });

  it('a 429 with a hint is a pause for exactly that long, not throttling: once each pause ends, no call is shed', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('hinted', { minimumThroughput: 5 }, { clock, random: () => 0 });
    const fail = (error: Error) =>
      breaker.execute(() => Promise.reject(error)).catch((e: unknown) => e);
    for (const headers of [
      { 'retry-after': '1' } as Record<string, string>,
      { 'retry-after-ms': '1000' },
      { 'x-ms-retry-after-ms': '1000' },
      { ratelimit: '"default";r=0;t=1' },
      { 'ratelimit-reset': '1' },
    ])
      for (let i = 0; i < 4; i++) {
        await fail(httpError(429, headers));
        clock.advance(1_000);
        // With a draw of 0, any probability above 0 would shed this call.
        await expect(breaker.execute(() => 'served')).resolves.toBe('served');
      }
    expect(breaker.snapshot().totals.rejected.throttled).toBe(0);
    expect(breaker.snapshot().totals.overloads).toBe(20);
  });

  it('a 429 with one of them pauses the breaker for exactly that long, and a 503 with one is an overload', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker('llm', {}, { clock, random: () => 0 });
    const fail = (error: Error) =>
      breaker.execute(() => Promise.reject(error)).catch((e: unknown) => e);
    for (const [headers, pauseMs] of [
      [{ 'retry-after-ms': '1500' }, 1_500],
      [{ 'x-ms-retry-after-ms': '250' }, 250],
      [{ ratelimit: '"default";r=0;t=3' }, 3_000],
      [{ 'ratelimit-reset': '2' }, 2_000],
    ] as const) {
      await fail(httpError(429, headers));
      expect(await fail(new Error('not called'))).toMatchObject({
        reason: 'retry-after',
        state: 'closed',
        retryAfterMs: pauseMs,
      });
      clock.advance(pauseMs - 1);
      expect(await fail(new Error('not called'))).toMatchObject({ retryAfterMs: 1 });
      clock.advance(1);
      await expect(breaker.execute(() => 'served')).resolves.toBe('served');
    }
    expect(defaultClassifyError(httpError(503, { 'retry-after-ms': '100' }))).toBe('overload');
    expect(defaultClassifyError(httpError(503, { ratelimit: '"default";r=0;t=1' }))).toBe(
      'overload',
    );
    expect(defaultClassifyError(httpError(503, { 'retry-after-ms': 'NaN' }))).toBe('failure');
    expect(breaker.snapshot().totals.failures.total).toBe(0);
  });
});

describe('custom classifiers', () => {
  it('classify overrides the default, and undefined falls back to it', async () => {
    const breaker = new Breaker('custom', {
      consecutiveFailures: 1,
      classify: (error) => ((error as Error).message === 'business rule' ? 'ignored' : undefined),
    });
    await breaker.execute(() => Promise.reject(new Error('business rule'))).catch(() => undefined);
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().totals.ignored).toBe(1);
    await breaker.execute(() => Promise.reject(httpError(404))).catch(() => undefined);
    expect(breaker.state).toBe('closed');
    await breaker.execute(() => Promise.reject(httpError(500))).catch(() => undefined);
    expect(breaker.state).toBe('open');
  });

  it('classifyResult turns a resolved value into a failure, and the caller still gets the value', async () => {
    const breaker = new Breaker('result', {
      consecutiveFailures: 2,
      classifyResult: (v) => ((v as { ok: boolean }).ok ? 'success' : 'failure'),
    });
    await expect(breaker.execute(() => ({ ok: false }))).resolves.toEqual({ ok: false });
    await expect(breaker.execute(() => ({ ok: false }))).resolves.toEqual({ ok: false });
    expect(breaker.state).toBe('open');
  });

  it('a resolved fetch Response with 500 counts as a failure', async () => {
    const breaker = new Breaker('fetch', { consecutiveFailures: 1 });
    const response = await breaker.execute(() => new Response('down', { status: 500 }));
    expect(response.status).toBe(500);
    expect(breaker.state).toBe('open');
  });

  it('a classifier that throws or answers nonsense counts the call as a failure and reports the bug once, never to the caller', async () => {
    const reported: Error[] = [];
    const reportError = (error: Error) => reported.push(error);
    const clock = new ManualClock();
    const classifierBug = new Error('classifier bug');
    const throwing = new Breaker(
      'throws',
      {
        consecutiveFailures: 2,
        classify: () => {
          throw classifierBug;
        },
      },
      { clock, reportError },
    );
    await expect(throwing.execute(() => Promise.reject(new Error('original')))).rejects.toThrow(
      'original',
    );
    await expect(throwing.execute(() => Promise.reject(new Error('again')))).rejects.toThrow(
      'again',
    );
    expect(throwing.state).toBe('open');
    const nonsense = new Breaker(
      'nonsense',
      { consecutiveFailures: 1, classifyResult: () => 'maybe' as never },
      { reportError },
    );
    await expect(nonsense.execute(() => 1)).resolves.toBe(1);
    expect(nonsense.state).toBe('open');
    expect(reported.map((e) => [e.name, e.message, e.cause])).toEqual([
      [
        'BreakerHookError',
        'Circuit breaker "throws": option "classify" threw Error: classifier bug. The call counted as a failure; make the classifier return an outcome instead of throwing. Later errors of this classifier are not reported again.',
        classifierBug,
      ],
      [
        'BreakerHookError',
        "Circuit breaker \"nonsense\": option \"classifyResult\" returned \"maybe\"; expected 'success', 'failure', 'ignored', 'overload' or undefined. The call counted as a failure; fix the classifier. Later errors of this classifier are not reported again.",
        undefined,
      ],
    ]);
  });
});
