import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CallRejectedError,
  ConcurrencyLimiter,
  isCallRejected,
  type LimitPermit,
} from '../../../lib/core/index.js';
import { ManualClock } from '../../../lib/testing/manual-clock.js';

const fixed = (limit: number, more: object = {}) => ({
  algorithm: 'fixed' as const,
  initialLimit: limit,
  ...more,
});

/** Lets settled waits run their continuations. */
const ticks = async (n = 4) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

function outcomeOf(promise: Promise<LimitPermit>): { value?: LimitPermit; error?: unknown } {
  const outcome: { value?: LimitPermit; error?: unknown } = {};
  promise.then(
    (value) => (outcome.value = value),
    (error: unknown) => (outcome.error = error),
  );
  return outcome;
}

describe('ConcurrencyLimiter', () => {
  it('admits up to its limit and sheds the next with reason shed, code LOAD_SHED and no pause', () => {
    const limiter = new ConcurrencyLimiter('api', fixed(2), { clock: new ManualClock() });
    const first = limiter.tryAcquire();
    const second = limiter.tryAcquire('sheddable');
    const third = limiter.tryAcquire('sheddable');

    expect(isCallRejected(first)).toBe(false);
    expect(isCallRejected(second)).toBe(false);
    expect(third).toBeInstanceOf(CallRejectedError);
    const refusal = third as CallRejectedError;
    expect([refusal.reason, refusal.code, refusal.retryAfterMs, refusal.breakerName]).toEqual([
      'shed',
      'LOAD_SHED',
      undefined,
      'api',
    ]);
    expect(refusal.message).toBe(
      'Concurrency limiter "api" shed the request: too many requests are in progress.',
    );
    expect(limiter.snapshot()).toMatchObject({
      limit: 2,
      inFlight: 2,
      admitted: 2,
      shed: 1,
      shedBy: { 'critical-plus': 0, critical: 0, 'sheddable-plus': 0, sheddable: 1 },
      shedding: true,
    });
  });

  it('frees the place once however often a permit is settled', () => {
    const limiter = new ConcurrencyLimiter('api', fixed(1), { clock: new ManualClock() });
    const permit = limiter.tryAcquire() as LimitPermit;
    permit.succeed();
    permit.release();
    permit.drop();
    expect(limiter.snapshot().inFlight).toBe(0);
    const next = limiter.tryAcquire() as LimitPermit;
    expect(isCallRejected(next)).toBe(false);
    expect(limiter.snapshot().inFlight).toBe(1);
  });

  it('hands a freed place to the most important waiter, oldest first', async () => {
    const limiter = new ConcurrencyLimiter('api', fixed(1, { maxQueue: 3 }), {
      clock: new ManualClock(),
    });
    const running = limiter.acquire() as LimitPermit;
    const order: string[] = [];
    const wait = (label: string, criticality: 'critical' | 'sheddable') =>
      (limiter.acquire(criticality) as Promise<LimitPermit>).then((permit) => {
        order.push(label);
        return permit;
      });
    const a = wait('sheddable 1', 'sheddable');
    const b = wait('critical', 'critical');
    const c = wait('sheddable 2', 'sheddable');
    expect(limiter.snapshot().queued).toBe(3);

    running.succeed();
    (await b).succeed();
    (await a).succeed();
    (await c).succeed();
    expect(order).toEqual(['critical', 'sheddable 1', 'sheddable 2']);
    expect(limiter.snapshot()).toMatchObject({ inFlight: 0, queued: 0, admitted: 4, shed: 0 });
  });

  it('gives up the newest least important waiter for a more important arrival at a full queue', async () => {
    const limiter = new ConcurrencyLimiter('api', fixed(1, { maxQueue: 2 }), {
      clock: new ManualClock(),
    });
    limiter.acquire();
    const older = outcomeOf(limiter.acquire('sheddable') as Promise<LimitPermit>);
    const newer = outcomeOf(limiter.acquire('sheddable') as Promise<LimitPermit>);
    const critical = outcomeOf(limiter.acquire('critical') as Promise<LimitPermit>);
    const another = outcomeOf(limiter.acquire('sheddable') as Promise<LimitPermit>);
    await ticks();

    expect((newer.error as CallRejectedError).reason).toBe('shed');
    expect((another.error as CallRejectedError).reason).toBe('shed');
    expect(older.error).toBeUndefined();
    expect(critical.error).toBeUndefined();
    expect(limiter.snapshot()).toMatchObject({ queued: 2, shed: 2, shedBy: { sheddable: 2 } });
  });

  it('sheds a waiter when queueTimeoutMs passes on its clock', async () => {
    const clock = new ManualClock();
    const limiter = new ConcurrencyLimiter('api', fixed(1, { maxQueue: 1, queueTimeoutMs: 50 }), {
      clock,
    });
    limiter.acquire();
    const waiting = outcomeOf(limiter.acquire('critical') as Promise<LimitPermit>);
    clock.advance(49);
    await ticks();
    expect(waiting.error).toBeUndefined();
    clock.advance(1);
    await ticks();
    expect((waiting.error as CallRejectedError).code).toBe('LOAD_SHED');
    expect(limiter.snapshot()).toMatchObject({ queued: 0, inFlight: 1, shed: 1 });
  });

  it("rejects a waiter with its signal's reason when it aborts, and keeps its place for nobody", async () => {
    const limiter = new ConcurrencyLimiter('api', fixed(1, { maxQueue: 1 }), {
      clock: new ManualClock(),
    });
    const running = limiter.acquire() as LimitPermit;
    const controller = new AbortController();
    const waiting = outcomeOf(
      limiter.acquire('critical', controller.signal) as Promise<LimitPermit>,
    );
    controller.abort(new Error('client went away'));
    await ticks();
    expect((waiting.error as Error).message).toBe('client went away');
    running.succeed();
    expect(limiter.snapshot()).toMatchObject({ inFlight: 0, queued: 0, shed: 0, admitted: 1 });
  });

  it('stops reporting shedding 10 s after the last shed request', () => {
    const clock = new ManualClock();
    const limiter = new ConcurrencyLimiter('api', fixed(1), { clock });
    limiter.tryAcquire();
    limiter.tryAcquire();
    clock.advance(9_999);
    expect(limiter.snapshot().shedding).toBe(true);
    clock.advance(1);
    expect(limiter.snapshot().shedding).toBe(false);
  });

  it('names the limiter and the option for bad options, with the closest name for a typo', () => {
    expect(() => new ConcurrencyLimiter('api', { maxQeue: 3 } as never)).toThrow(
      'Concurrency limiter "api": unknown option "maxQeue". Known options: algorithm, initialLimit, minLimit, maxLimit, maxQueue, queueTimeoutMs. Did you mean "maxQueue"?',
    );
    expect(() => new ConcurrencyLimiter('api', { algorithm: 'vegas' } as never)).toThrow(
      `Concurrency limiter "api": option "algorithm" must be 'gradient', 'aimd' or 'fixed', got "vegas".`,
    );
    expect(() => new ConcurrencyLimiter('api', { minLimit: 5, maxLimit: 4 })).toThrow(
      'Concurrency limiter "api": maxLimit (4) must not be below minLimit (5).',
    );
    expect(
      () => new ConcurrencyLimiter('api', { algorithm: 'fixed', initialLimit: 4, maxLimit: 8 }),
    ).toThrow(
      `Concurrency limiter "api": maxLimit bounds an adaptive limit, and algorithm 'fixed' keeps initialLimit. Leave maxLimit out, or choose 'gradient' or 'aimd'.`,
    );
    expect(() => new ConcurrencyLimiter('api', { maxQueue: 0, queueTimeoutMs: 50 })).toThrow(
      'Concurrency limiter "api": queueTimeoutMs applies to requests waiting in the queue, and maxQueue is 0: nobody waits. Give maxQueue, or leave queueTimeoutMs out.',
    );
    // A fixed limit is any count: the adaptive bounds' defaults do not cap it.
    expect(
      new ConcurrencyLimiter('api', { algorithm: 'fixed', initialLimit: 5_000 }).snapshot().limit,
    ).toBe(5_000);
    expect(() => new ConcurrencyLimiter('api', { minLimit: 50 })).not.toThrow();
    expect(new ConcurrencyLimiter('api', { minLimit: 50 }).snapshot().limit).toBe(50);
    expect(() => new ConcurrencyLimiter('api').tryAcquire('urgent' as never)).toThrow(
      `Concurrency limiter "api": a request's criticality must be one of 'critical-plus', 'critical', 'sheddable-plus', 'sheddable', got "urgent".`,
    );
  });

  describe('a waiter whose queue timeout is due in the same batch as an earlier expiry', () => {
    // One clock, one deadline scheduler: a breaker call's deadline and a waiter's timeout expire in one batch.
    const setUp = () => {
      const clock = new ManualClock();
      const limiter = new ConcurrencyLimiter(
        'api',
        fixed(1, { maxQueue: 1, queueTimeoutMs: 100 }),
        {
          clock,
        },
      );
      const breaker = new Breaker('dependency', { timeoutMs: 100 }, { clock });
      const held = limiter.tryAcquire() as LimitPermit;
      // The request holding the place calls a dependency; the call's deadline ends the request.
      const onDeadline = (end: () => void) =>
        void breaker
          .execute(({ signal }) => {
            signal!.addEventListener('abort', end);
            return new Promise<never>(() => {});
          })
          .catch(() => undefined);
      return { clock, limiter, held, onDeadline };
    };

    it('is granted by the earlier expiry, and not also shed by its own', async () => {
      const { clock, limiter, held, onDeadline } = setUp();
      onDeadline(() => held.drop());
      const outcome = outcomeOf(limiter.acquire('critical') as Promise<LimitPermit>);

      clock.advance(100);
      await ticks();

      expect(isCallRejected(outcome.value)).toBe(false);
      expect(outcome.value).toBeDefined();
      const { inFlight, admitted, shed, shedding } = limiter.snapshot();
      expect({ inFlight, admitted, shed, shedding }).toEqual({
        inFlight: 1,
        admitted: 2,
        shed: 0,
        shedding: false,
      });
    });

    it('left the queue by an abort in the earlier expiry, and is not also shed', async () => {
      const { clock, limiter, onDeadline } = setUp();
      const controller = new AbortController();
      onDeadline(() => controller.abort(new Error('client left')));
      const outcome = outcomeOf(
        limiter.acquire('critical', controller.signal) as Promise<LimitPermit>,
      );

      clock.advance(100);
      await ticks();

      expect(String(outcome.error)).toBe('Error: client left');
      const { inFlight, queued, shed, shedding } = limiter.snapshot();
      expect({ inFlight, queued, shed, shedding }).toEqual({
        inFlight: 1,
        queued: 0,
        shed: 0,
        shedding: false,
      });
    });
  });
});
