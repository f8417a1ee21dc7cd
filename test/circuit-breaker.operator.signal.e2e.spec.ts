import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defer, firstValueFrom, from, NEVER, Subject, switchMap, takeUntil } from 'rxjs';
import { fromFetch } from 'rxjs/fetch';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  circuitBreaker,
  CallRejectedError,
  getCallSignal,
} from '../lib/index.js';
import { ManualClock } from '../lib/testing/index.js';

/**
 * A real upstream on loopback that never answers: what it received, and when
 * each request's connection was closed by the client.
 */
async function hangingUpstream() {
  const received: IncomingMessage[] = [];
  const closed: Promise<void>[] = [];
  let arrived: () => void = () => undefined;
  const server: Server = createServer((request) => {
    received.push(request);
    closed.push(new Promise((resolve) => request.socket.once('close', () => resolve())));
    arrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
  return {
    url,
    received,
    closed,
    /** Resolves once `count` requests have arrived. */
    arrival: (count: number) =>
      new Promise<void>((resolve) => {
        arrived = () => received.length >= count && resolve();
        arrived();
      }),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('circuitBreaker() and the request it protects, over real HTTP', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  async function setup() {
    const upstream = await hangingUpstream();
    cleanups.push(upstream.close);
    const clock = new ManualClock();
    const breaker = new Breaker(
      'upstream',
      { timeoutMs: 1_000, consecutiveFailures: 1, openDurationMs: 60_000 },
      { clock },
    );
    return { upstream, clock, breaker };
  }

  it('inside defer(), getCallSignal() is the call’s signal: the deadline aborts the request and closes its connection', async () => {
    const { upstream, clock, breaker } = await setup();
    let signal: AbortSignal | undefined;
    const call = defer(() => {
      signal = getCallSignal();
      return fetch(upstream.url, { signal });
    }).pipe(circuitBreaker(breaker));
    const outcome = firstValueFrom(call).catch((error: unknown) => error);
    await upstream.arrival(1);
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal!.aborted).toBe(false);

    clock.advance(1_000);
    expect(await outcome).toBeInstanceOf(CallTimeoutError);
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBeInstanceOf(CallTimeoutError);
    // The client closed the connection: the upstream is no longer held by a request nobody waits for.
    await upstream.closed[0];
    expect(breaker.state).toBe('open');
    expect(getCallSignal()).toBeUndefined();
  });

  it('unsubscribing before the call settles aborts its signal (an AbortError) and closes the connection', async () => {
    const { upstream, breaker } = await setup();
    let signal: AbortSignal | undefined;
    const stop = new Subject<void>();
    const results: unknown[] = [];
    defer(() => {
      signal = getCallSignal();
      return fetch(upstream.url, { signal });
    })
      .pipe(circuitBreaker(breaker), takeUntil(stop))
      .subscribe({ next: (value) => results.push(value), error: (e) => results.push(e) });
    await upstream.arrival(1);
    expect(signal!.aborted).toBe(false);

    stop.next();
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toMatchObject({ name: 'AbortError' });
    await upstream.closed[0];
    expect(results).toEqual([]);
    // Unsubscribing says nothing about the dependency.
    expect(breaker.snapshot().totals).toMatchObject({ failures: { total: 0 }, ignored: 1 });
    expect(breaker.state).toBe('closed');
  });

  it('switchMap() to a new request aborts the previous one; a call without a deadline has no signal', async () => {
    const { upstream, breaker } = await setup();
    const signals: (AbortSignal | undefined)[] = [];
    const ids = new Subject<number>();
    const subscription = ids
      .pipe(
        switchMap(() =>
          defer(() => {
            signals.push(getCallSignal());
            return NEVER;
          }).pipe(circuitBreaker(breaker)),
        ),
      )
      .subscribe();
    ids.next(1);
    ids.next(2);
    expect(signals.map((signal) => signal?.aborted)).toEqual([true, false]);
    subscription.unsubscribe();
    expect(signals[1]!.aborted).toBe(true);

    const unbounded = new Breaker('unbounded', { timeoutMs: false });
    let seen: AbortSignal | undefined = new AbortController().signal;
    defer(() => {
      seen = getCallSignal();
      return NEVER;
    })
      .pipe(circuitBreaker(unbounded))
      .subscribe()
      .unsubscribe();
    expect(seen).toBeUndefined();
    expect(upstream.received).toHaveLength(0);
  });

  it('an open breaker never starts a deferred request (or a fromFetch one), while from(fetch()) has already sent its own', async () => {
    const { upstream, clock, breaker } = await setup();
    breaker.acquire().fail(new Error('down'));
    expect(breaker.state).toBe('open');
    for (const source of [
      defer(() => fetch(upstream.url, { signal: getCallSignal() })),
      fromFetch(upstream.url),
    ])
      await expect(firstValueFrom(source.pipe(circuitBreaker(breaker)))).rejects.toBeInstanceOf(
        CallRejectedError,
      );
    expect(upstream.received).toHaveLength(0);

    // The promise exists before the breaker decides: the request is on its way whatever it says.
    const controller = new AbortController();
    const early = fetch(upstream.url, { signal: controller.signal }).catch(() => undefined);
    await expect(firstValueFrom(from(early).pipe(circuitBreaker(breaker)))).rejects.toBeInstanceOf(
      CallRejectedError,
    );
    await upstream.arrival(1);
    expect(upstream.received).toHaveLength(1);
    controller.abort();
    await early;
    expect(clock.now()).toBe(new ManualClock().now());
  });

  it('fromFetch() needs no signal: the deadline unsubscribes it, which aborts its request', async () => {
    const { upstream, clock, breaker } = await setup();
    const outcome = firstValueFrom(fromFetch(upstream.url).pipe(circuitBreaker(breaker))).catch(
      (error: unknown) => error,
    );
    await upstream.arrival(1);
    clock.advance(1_000);
    expect(await outcome).toBeInstanceOf(CallTimeoutError);
    await upstream.closed[0];
    expect(breaker.snapshot().totals.failures.timeout).toBe(1);
  });
});
