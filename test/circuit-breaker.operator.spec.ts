import { BadRequestException } from '@nestjs/common';
import { defer, firstValueFrom, NEVER, Observable, of, Subject, throwError, timer } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, CallTimeoutError, circuitBreaker, CallRejectedError } from '../lib/index.js';
import { ManualClock } from './helpers/manual-clock.js';

function collect<T>(source: Observable<T>) {
  const seen: { values: T[]; error?: unknown; complete: boolean } = { values: [], complete: false };
  const subscription = source.subscribe({
    next: (v) => seen.values.push(v),
    error: (e: unknown) => (seen.error = e),
    complete: () => (seen.complete = true),
  });
  return { seen, subscription };
}

const down = () => Object.assign(new Error('down'), { status: 500 });

describe('circuitBreaker() operator', () => {
  let clock: ManualClock;
  beforeEach(() => {
    clock = new ManualClock();
  });

  it('a completing source is a success', async () => {
    const breaker = new Breaker('of', {}, { clock });
    expect(await firstValueFrom(of(1).pipe(circuitBreaker(breaker)))).toBe(1);
    expect(breaker.snapshot().totals).toMatchObject({ admitted: 1, successes: 1 });
  });

  it('an error is classified: a 500 is a failure, a 400 a success that still reaches the subscriber', () => {
    const breaker = new Breaker('errors', { consecutiveFailures: 2 }, { clock });
    const bad = collect(throwError(() => new BadRequestException()).pipe(circuitBreaker(breaker)));
    expect(bad.seen.error).toBeInstanceOf(BadRequestException);
    expect(collect(throwError(down).pipe(circuitBreaker(breaker))).seen.error).toMatchObject({
      message: 'down',
    });
    expect(breaker.snapshot().totals).toMatchObject({ successes: 1, failures: { total: 1 } });
  });

  it('each subscription is one call, and an open breaker never subscribes to the source', () => {
    const breaker = new Breaker('cold', { consecutiveFailures: 2 }, { clock });
    let subscriptions = 0;
    const call = defer(() => {
      subscriptions++;
      return throwError(down);
    }).pipe(circuitBreaker(breaker));
    collect(call);
    collect(call);
    const rejected = collect(call);
    expect(subscriptions).toBe(2);
    expect(rejected.seen.error).toBeInstanceOf(CallRejectedError);
    expect(rejected.seen.error).toMatchObject({
      breakerName: 'cold',
      reason: 'open',
      state: 'open',
    });
  });

  describe('a first value the breaker counts as failed (a fetch Response with 503 or 429)', () => {
    const answer = (status: number) => new Response(null, { status });
    const statusOf = (value: unknown) => (value instanceof Response ? value.status : value);

    it('is replaced by the fallback, which is given that value, and the rest of the source is dropped', () => {
      const breaker = new Breaker('resolved-503', {}, { clock });
      const source = new Subject<Response>();
      let unsubscribed = false;
      const watched = new Observable<Response>((subscriber) => {
        const inner = source.subscribe(subscriber);
        return () => {
          unsubscribed = true;
          inner.unsubscribe();
        };
      });
      const { seen } = collect(
        watched.pipe(
          circuitBreaker(breaker, { fallback: (value) => of(`fallback for ${statusOf(value)}`) }),
        ),
      );
      source.next(answer(503));
      source.next(answer(200));
      expect(seen).toEqual({ values: ['fallback for 503'], complete: true });
      expect(unsubscribed).toBe(true);
      expect(breaker.snapshot().totals).toMatchObject({ failures: { total: 1 }, fallbacks: 1 });
    });

    it('is replaced when a synchronous source emits it, and its later synchronous values never reach the subscriber', () => {
      const breaker = new Breaker('resolved-429-sync', {}, { clock });
      const { seen } = collect(
        of(answer(429), answer(200)).pipe(
          circuitBreaker(breaker, { fallback: (value) => of(`fallback for ${statusOf(value)}`) }),
        ),
      );
      expect(seen).toEqual({ values: ['fallback for 429'], complete: true });
      expect(breaker.snapshot().totals).toMatchObject({ overloads: 1, fallbacks: 1 });
    });

    it('reaches the subscriber, with what follows, without a fallback; a 400 always does', () => {
      const breaker = new Breaker('resolved-passes', {}, { clock });
      const plain = collect(of(answer(503), answer(200)).pipe(circuitBreaker(breaker)));
      expect(plain.seen.values.map(statusOf)).toEqual([503, 200]);
      expect(plain.seen.complete).toBe(true);
      const fallback = vi.fn(() => of('fallback'));
      const bad = collect(of(answer(400)).pipe(circuitBreaker(breaker, { fallback })));
      expect(bad.seen.values.map(statusOf)).toEqual([400]);
      expect(fallback).not.toHaveBeenCalled();
      expect(breaker.snapshot().totals).toMatchObject({
        successes: 1,
        failures: { total: 1 },
        fallbacks: 0,
      });
    });

    it('errors the subscriber with what a throwing fallback threw', () => {
      const breaker = new Breaker('resolved-throwing-fallback', {}, { clock });
      const broken = new Error('fallback broke');
      const { seen } = collect(
        of(answer(503)).pipe(
          circuitBreaker(breaker, {
            fallback: () => {
              throw broken;
            },
          }),
        ),
      );
      expect(seen).toEqual({ values: [], error: broken, complete: false });
    });
  });

  it('delivers CallRejectedError synchronously at subscribe time, or the fallback', () => {
    const breaker = new Breaker('sync-reject', {}, { clock });
    breaker.isolate();
    const plain = collect(of(1).pipe(circuitBreaker(breaker)));
    expect(plain.seen.error).toMatchObject({ reason: 'isolated' });
    const rescued = collect(
      of(1).pipe(
        circuitBreaker(breaker, { fallback: (e) => of(`fallback after ${(e as Error).name}`) }),
      ),
    );
    expect(rescued.seen).toEqual({ values: ['fallback after CallRejectedError'], complete: true });
    expect(breaker.snapshot().totals.fallbacks).toBe(1);
  });

  it('falls back on failures, never on errors classified as success', () => {
    const breaker = new Breaker('fallback', {}, { clock });
    const fallback = () => of('stale');
    expect(
      collect(throwError(down).pipe(circuitBreaker(breaker, { fallback }))).seen.values,
    ).toEqual(['stale']);
    expect(
      collect(
        throwError(() => new BadRequestException()).pipe(circuitBreaker(breaker, { fallback })),
      ).seen.error,
    ).toBeInstanceOf(BadRequestException);
  });

  it('the first value of a stream that never completes is the success; later errors pass through uncounted', () => {
    const breaker = new Breaker('stream', { consecutiveFailures: 1 }, { clock });
    const source = new Subject<number>();
    const { seen } = collect(source.pipe(circuitBreaker(breaker)));
    expect(breaker.snapshot().totals.successes).toBe(0);
    source.next(1);
    expect(breaker.snapshot().totals.successes).toBe(1);
    source.next(2);
    source.error(down());
    expect(seen.values).toEqual([1, 2]);
    expect(seen.error).toMatchObject({ message: 'down' });
    expect(breaker.state).toBe('closed');
  });

  it('unsubscribing before the outcome counts as ignored and returns a half-open probe permit', () => {
    const breaker = new Breaker(
      'unsubscribe',
      { consecutiveFailures: 1, openDurationMs: 100 },
      { clock },
    );
    collect(throwError(down).pipe(circuitBreaker(breaker)));
    clock.advance(100);
    const probe = collect(NEVER.pipe(circuitBreaker(breaker)));
    expect(breaker.snapshot().halfOpen).toMatchObject({ probesAdmitted: 1, probesInFlight: 1 });
    expect(collect(of(1).pipe(circuitBreaker(breaker))).seen.error).toMatchObject({
      reason: 'half-open-busy',
    });
    probe.subscription.unsubscribe();
    expect(breaker.snapshot().halfOpen).toMatchObject({ probesAdmitted: 0, probesInFlight: 0 });
    expect(breaker.snapshot().totals).toMatchObject({ ignored: 1, probes: { released: 1 } });
    expect(collect(of(2).pipe(circuitBreaker(breaker))).seen.values).toEqual([2]);
    expect(breaker.state).toBe('closed');
  });

  it('an operator probe that the breaker gives up on ends its subscription with the expiry error', async () => {
    const breaker = new Breaker(
      'op-probe',
      { consecutiveFailures: 1, openDurationMs: 10, halfOpen: { maxWaitMs: 100 } },
      { clock },
    );
    await breaker.execute(() => Promise.reject(new Error('x'))).catch(() => undefined);
    clock.advance(10);
    let unsubscribed = false;
    let error: unknown;
    new Observable<never>(() => () => (unsubscribed = true))
      .pipe(circuitBreaker(breaker))
      .subscribe({ error: (e: unknown) => (error = e) });
    clock.advance(100);
    expect(breaker.state).toBe('open');
    expect(error).toBeInstanceOf(CallTimeoutError);
    expect(error).toMatchObject({ breakerName: 'op-probe', timeoutMs: 100 });
    expect((error as CallTimeoutError).message).toContain('halfOpen.maxWaitMs (100 ms)');
    expect(unsubscribed).toBe(true);
  });

  describe('with timeoutMs', () => {
    beforeEach(() => vi.useFakeTimers());
    afterEach(() => vi.useRealTimers());

    it('unsubscribes the source and errors with CallTimeoutError', () => {
      const breaker = new Breaker('deadline', { timeoutMs: 100 }, { clock });
      let active = 0;
      const hanging = new Observable<never>(() => {
        active++;
        return () => active--;
      });
      const { seen } = collect(hanging.pipe(circuitBreaker(breaker)));
      expect(active).toBe(1);
      vi.advanceTimersByTime(99);
      expect(seen.error).toBeUndefined();
      vi.advanceTimersByTime(1);
      expect(seen.error).toBeInstanceOf(CallTimeoutError);
      expect(seen.error).toMatchObject({ breakerName: 'deadline', timeoutMs: 100 });
      expect(active).toBe(0);
      expect(breaker.snapshot().totals).toMatchObject({ timeouts: 1, failures: { timeout: 1 } });
      // Nothing else waits: the process's deadline timer is not armed again.
      expect(vi.getTimerCount()).toBe(0);
    });

    it('serves the fallback on timeout, and a source that answers first leaves nothing to expire', () => {
      const breaker = new Breaker('deadline-2', { timeoutMs: 100 }, { clock });
      const { seen } = collect(
        NEVER.pipe(circuitBreaker(breaker, { fallback: () => of('late fallback') })),
      );
      vi.advanceTimersByTime(100);
      expect(seen).toEqual({ values: ['late fallback'], complete: true });
      const answered = collect(timer(10).pipe(circuitBreaker(breaker)));
      vi.advanceTimersByTime(200);
      expect(answered.seen).toEqual({ values: [0], complete: true });
      expect(breaker.snapshot().totals).toMatchObject({ successes: 1, timeouts: 1 });
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  describe('a fallback that throws or returns no ObservableInput', () => {
    // Before the fix these threw from the source's error handler, a timer or an abort listener: an uncaught
    // exception, and a subscriber that never heard the end.
    afterEach(() => vi.useRealTimers());
    const broken = new Error('fallback broken');
    const throwing = () => {
      throw broken;
    };

    it('errors the subscriber after a source error, as catchError does', () => {
      const breaker = new Breaker('fallback-throws', {}, { clock });
      const { seen } = collect(
        throwError(down).pipe(circuitBreaker(breaker, { fallback: throwing })),
      );
      expect(seen).toEqual({ values: [], error: broken, complete: false });
      expect(breaker.snapshot().totals).toMatchObject({ failures: { total: 1 }, fallbacks: 1 });
    });

    it("errors the subscriber with from()'s TypeError when the fallback returns something that is not an ObservableInput", () => {
      const breaker = new Breaker('fallback-undefined', {}, { clock });
      const { seen } = collect(
        throwError(down).pipe(circuitBreaker(breaker, { fallback: () => undefined as never })),
      );
      expect(seen.values).toEqual([]);
      expect(seen.complete).toBe(false);
      expect(seen.error).toBeInstanceOf(TypeError);
      expect((seen.error as TypeError).message).toBe(
        "You provided 'undefined' where a stream was expected. You can provide an Observable, Promise, ReadableStream, Array, AsyncIterable, or Iterable.",
      );
    });

    it('errors the subscriber after an asynchronous source error', () => {
      const breaker = new Breaker('fallback-throws-async', {}, { clock });
      const source = new Subject<number>();
      const { seen } = collect(source.pipe(circuitBreaker(breaker, { fallback: throwing })));
      source.error(down());
      expect(seen).toEqual({ values: [], error: broken, complete: false });
    });

    it('errors the subscriber after the deadline', () => {
      vi.useFakeTimers();
      const breaker = new Breaker('fallback-throws-timeout', { timeoutMs: 100 }, { clock });
      const { seen } = collect(NEVER.pipe(circuitBreaker(breaker, { fallback: throwing })));
      expect(() => vi.advanceTimersByTime(100)).not.toThrow();
      expect(seen).toEqual({ values: [], error: broken, complete: false });
      expect(breaker.snapshot().totals).toMatchObject({ timeouts: 1, fallbacks: 1 });
    });

    it('errors the subscriber of a probe that expired (halfOpen.maxWaitMs)', () => {
      const breaker = new Breaker(
        'fallback-throws-probe',
        { consecutiveFailures: 1, openDurationMs: 100, halfOpen: { maxWaitMs: 50 } },
        { clock },
      );
      collect(throwError(down).pipe(circuitBreaker(breaker)));
      clock.advance(100);
      const probe = collect(NEVER.pipe(circuitBreaker(breaker, { fallback: throwing })));
      clock.advance(50);
      // The next call finds the probe expired and aborts its signal, running the probe's fallback.
      expect(() => breaker.state).not.toThrow();
      collect(of(1).pipe(circuitBreaker(breaker)));
      expect(probe.seen).toEqual({ values: [], error: broken, complete: false });
    });

    it('still errors the subscriber on a rejection (the path that already did)', () => {
      const breaker = new Breaker('fallback-throws-rejected', {}, { clock });
      breaker.isolate();
      expect(collect(of(1).pipe(circuitBreaker(breaker, { fallback: throwing }))).seen).toEqual({
        values: [],
        error: broken,
        complete: false,
      });
    });
  });

  it('validates its arguments when created', () => {
    expect(() => circuitBreaker({} as never)).toThrow(
      'circuitBreaker() takes a Breaker, got object.',
    );
    expect(() => circuitBreaker(new Breaker('x'), { fallback: 'nope' as never })).toThrow(
      new TypeError(
        'circuitBreaker() on circuit breaker "x": option "fallback" must be a function returning an ObservableInput, got "nope".',
      ),
    );
  });
});
