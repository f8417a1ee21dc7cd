import {
  BadRequestException,
  HttpException,
  InternalServerErrorException,
  NotFoundException,
} from '@nestjs/common';
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
import { failureCategoryOf } from '../../lib/core/classify.js';
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
});

describe('Retry-After', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');

  it('parses delta-seconds and HTTP-dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sun, 29 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 29 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
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
    expect(parseRetryAfter('9'.repeat(400), now)).toBeUndefined();
    expect(parseRetryAfter('9'.repeat(300), now)).toBe(Number('9'.repeat(300)) * 1000);
    expect(retryAfterOf(httpError(503, { 'retry-after': '9'.repeat(400) }), now)).toBeUndefined();
    expect(
      retryAfterOf(Object.assign(new Error(), { retryAfterMs: Infinity }), now),
    ).toBeUndefined();
    expect(retryAfterOf(Object.assign(new Error(), { retryAfterMs: NaN }), now)).toBeUndefined();
    expect(retryAfterOf(new HttpException({ retryAfterMs: Infinity }, 503), now)).toBeUndefined();
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
        'Circuit breaker "throws": option "classify" threw Error: classifier bug. The call counted as a failure; make the classifier return an outcome instead of throwing. Later faults of this classifier are not reported again.',
        classifierBug,
      ],
      [
        'BreakerHookError',
        "Circuit breaker \"nonsense\": option \"classifyResult\" returned \"maybe\"; expected 'success', 'failure', 'ignored', 'overload' or undefined. The call counted as a failure; fix the classifier. Later faults of this classifier are not reported again.",
        undefined,
      ],
    ]);
  });
});
