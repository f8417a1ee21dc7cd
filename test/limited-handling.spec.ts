import { HttpException } from '@nestjs/common';
import { Observable, of, Subject, throwError, TimeoutError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { CallRejectedError, ConcurrencyLimiter, type LimitPermit } from '../lib/index.js';
import { limitedHandling, type ClientConnection } from '../lib/limited-handling.js';
import { ManualClock } from '../lib/testing/manual-clock.js';
import { deferred } from './helpers/deferred.js';

/** A limiter that always grants a place, and records how each place ended. */
function recordingLimiter(queued?: Promise<LimitPermit>) {
  const ends: string[] = [];
  const signals: AbortSignal[] = [];
  const permit = (): LimitPermit => {
    let ended = false;
    const end = (how: string) => () => {
      if (!ended) ends.push(how);
      ended = true;
    };
    return { succeed: end('succeed'), drop: end('drop'), release: end('release') };
  };
  const limiter = {
    // A limiter given a wait has no free place: the request waits (with a signal).
    hasFreePlace: queued === undefined,
    tryAcquire: () => permit(),
    acquire: (_criticality: unknown, signal: AbortSignal) => {
      signals.push(signal);
      return queued ?? permit();
    },
  } as unknown as ConcurrencyLimiter;
  return { limiter, ends, signals, permit };
}

const handling = (limiter: ConcurrencyLimiter, source: Observable<unknown>, queues = false) =>
  limitedHandling(
    { handle: () => source },
    {
      limiter,
      criticality: 'critical',
      queues,
      connection: () => undefined,
      refuse: (rejection) => rejection,
    },
  );

const settle = (observable: Observable<unknown>) =>
  new Promise<void>((resolve) =>
    observable.subscribe({ error: () => resolve(), complete: resolve }),
  );

describe('limitedHandling(): how a place ends', () => {
  it('succeeds when the handler completes: its time is a latency sample', async () => {
    const { limiter, ends } = recordingLimiter();
    await settle(handling(limiter, of({ ok: true })));
    expect(ends).toEqual(['succeed']);
  });

  it.each([
    ['a 504 HttpException', new HttpException('too slow', 504)],
    [
      "an outbound breaker's full bulkhead",
      new CallRejectedError('payments', 'closed', 'bulkhead-full', undefined),
    ],
    ["another limiter's shed", new CallRejectedError('reports', 'closed', 'shed', undefined)],
    [
      "a breaker's CallTimeoutError (by its code)",
      Object.assign(new Error('late'), { code: 'CALL_TIMEOUT' }),
    ],
    ["RxJS's TimeoutError", new TimeoutError()],
  ])('drops on %s: an overload sign, the limit backs off', async (_what, error) => {
    const { limiter, ends } = recordingLimiter();
    await settle(
      handling(
        limiter,
        throwError(() => error),
      ),
    );
    expect(ends).toEqual(['drop']);
  });

  it.each([
    ['a 400 HttpException', new HttpException('bad input', 400)],
    ['a 404 HttpException', new HttpException('no such order', 404)],
    ['an unexpected error', new Error('null pointer')],
    // A dependency's trouble, not this service's: counted as overload, open circuits took the limit to 1.
    ["an open circuit's refusal", new CallRejectedError('payments', 'open', 'open', 5000)],
    ['a 503 HttpException passed on', new HttpException('busy', 503)],
    ['a 429 HttpException passed on', new HttpException('slow down', 429)],
  ])('only frees the place on %s: a failure path measures no capacity', async (_what, error) => {
    const { limiter, ends } = recordingLimiter();
    await settle(
      handling(
        limiter,
        throwError(() => error),
      ),
    );
    expect(ends).toEqual(['release']);
  });

  it('releases the place when the subscriber leaves before the handler settles', () => {
    const { limiter, ends } = recordingLimiter();
    const source = new Subject<unknown>();
    const subscription = handling(limiter, source).subscribe();
    expect(source.observed).toBe(true);
    subscription.unsubscribe();
    expect(source.observed).toBe(false);
    expect(ends).toEqual(['release']);
  });

  it('leaves the queue when the subscriber leaves while waiting, and never runs the handler', async () => {
    const wait = deferred<LimitPermit>();
    const { limiter, ends, signals, permit } = recordingLimiter(wait.promise);
    let subscribed = 0;
    const source = new Observable(() => void subscribed++);
    const subscription = handling(limiter, source, true).subscribe();
    subscription.unsubscribe();
    expect(signals[0]!.aborted).toBe(true);
    // A place given at that very moment goes back at once.
    wait.resolve(permit());
    await wait.promise;
    await Promise.resolve();
    expect(ends).toEqual(['release']);
    expect(subscribed).toBe(0);
  });

  it('takes a free place without an abort signal, even from a limiter that queues', async () => {
    const { limiter, ends, signals } = recordingLimiter();
    await settle(handling(limiter, of(1), true));
    expect([ends, signals]).toEqual([['succeed'], []]);
  });

  it('answers a refusal with what refuse() makes of it, without running the handler', async () => {
    const rejection = new CallRejectedError('api', 'closed', 'open', 1000);
    const limiter = { tryAcquire: () => rejection } as unknown as ConcurrencyLimiter;
    let subscribed = 0;
    const errors: unknown[] = [];
    limitedHandling(
      { handle: () => new Observable(() => void subscribed++) },
      {
        limiter,
        criticality: 'critical',
        queues: false,
        connection: () => undefined,
        refuse: (refused) => new Error(`refused by ${refused.breakerName}`),
      },
    ).subscribe({ error: (error: unknown) => errors.push(error) });
    expect(errors).toEqual([new Error('refused by api')]);
    expect(subscribed).toBe(0);
  });

  it('frees the place and ends the result when a handler throws before it has a result', () => {
    const { limiter, ends } = recordingLimiter();
    const errors: unknown[] = [];
    limitedHandling(
      {
        handle: () => {
          throw new Error('no result');
        },
      },
      {
        limiter,
        criticality: 'critical',
        queues: false,
        connection: () => undefined,
        refuse: (rejection) => rejection,
      },
    ).subscribe({ error: (error: unknown) => errors.push(error) });
    expect([ends, errors]).toEqual([['release'], [new Error('no result')]]);
  });

  it('ends the result of a request granted a place in the turn its client went away', async () => {
    const limiter = new ConcurrencyLimiter(
      'api',
      { algorithm: 'fixed', initialLimit: 1, maxQueue: 4 },
      { clock: new ManualClock() },
    );
    const held = limiter.tryAcquire() as LimitPermit;
    const connection = Object.assign(new EventEmitter(), { writableEnded: false });
    let ran = 0;
    const events: string[] = [];
    limitedHandling(
      {
        handle: () => {
          ran++;
          return of('answer');
        },
      },
      {
        limiter,
        criticality: 'critical',
        queues: true,
        connection: () => connection as unknown as ClientConnection,
        refuse: (rejection) => rejection,
      },
    ).subscribe({
      next: (value) => events.push(`next ${String(value)}`),
      error: () => events.push('error'),
      complete: () => events.push('complete'),
    });
    // The place is granted at once; the waiting request learns it a microtask later, after its client left.
    held.succeed();
    connection.emit('close');
    for (let i = 0; i < 4; i++) await Promise.resolve();
    expect({ events, ran, inFlight: limiter.snapshot().inFlight }).toEqual({
      events: ['next undefined', 'complete'],
      ran: 0,
      inFlight: 0,
    });
  });
});

describe('a dependency that is down does not shrink the service it is behind', () => {
  it('60 fast refusals of an open circuit leave an AIMD limit of 50 where it was', async () => {
    const limiter = new ConcurrencyLimiter('api', { algorithm: 'aimd', initialLimit: 50 });
    for (let i = 0; i < 60; i++)
      await settle(
        handling(
          limiter,
          throwError(() => new CallRejectedError('payments', 'open', 'open', 5000)),
        ),
      );
    expect(limiter.snapshot()).toMatchObject({ limit: 50, inFlight: 0 });
  });
});
