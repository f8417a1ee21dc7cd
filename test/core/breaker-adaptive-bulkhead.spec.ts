import { describe, expect, it, vi } from 'vitest';
import { Breaker, BreakerConfigError, type BreakerOptions } from '../../lib/core/index.js';
import type { LimitAlgorithm } from '../../lib/core/limit/limit-algorithm.js';
import type { ResolvedLimitOptions } from '../../lib/core/limit/limit-options.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { deferred } from '../helpers/deferred.js';

type Sample = [startedAt: number, rttMs: number, inFlight: number, dropped: boolean];

/** Every algorithm a bulkhead makes, and every sample it is told, in order. */
const recorded = vi.hoisted(() => ({
  made: [] as ResolvedLimitOptions[],
  samples: [] as Sample[],
}));

// The real algorithms, recorded: the tests check what the bulkhead tells them and that its cap is their limit,
// whatever the algorithms do with it (they have specs of their own).
vi.mock('../../lib/core/limit/limit-algorithm-of.js', async (importOriginal) => {
  const actual =
    await importOriginal<typeof import('../../lib/core/limit/limit-algorithm-of.js')>();
  return {
    limitAlgorithmOf(options: ResolvedLimitOptions): LimitAlgorithm {
      const inner = actual.limitAlgorithmOf(options);
      recorded.made.push(options);
      return {
        get limit() {
          return inner.limit;
        },
        sample(...sample: Sample) {
          recorded.samples.push(sample);
          inner.sample(...sample);
        },
      };
    },
  };
});

const { limitAlgorithmOf: realAlgorithmOf } = await vi.importActual<
  typeof import('../../lib/core/limit/limit-algorithm-of.js')
>('../../lib/core/limit/limit-algorithm-of.js');

/** The limit the real algorithm of `options` reaches after `samples`: what the bulkhead's cap must be. */
function limitAfter(options: ResolvedLimitOptions, samples: readonly Sample[]): number {
  const algorithm = realAlgorithmOf(options);
  for (const sample of samples) algorithm.sample(...sample);
  return algorithm.limit;
}

/** Lets queued continuations (a slot handed over, a finally) run. */
const ticks = async (n = 6) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

function adaptive(name: string, options: BreakerOptions) {
  recorded.made.length = 0;
  recorded.samples.length = 0;
  const clock = new ManualClock();
  const breaker = new Breaker(name, options, { clock });
  return { breaker, clock };
}

const AIMD_2_TO_10: BreakerOptions['bulkhead'] = {
  algorithm: 'aimd',
  initialLimit: 2,
  minLimit: 1,
  maxLimit: 10,
};
const RESOLVED_2_TO_10: ResolvedLimitOptions = {
  algorithm: 'aimd',
  initialLimit: 2,
  minLimit: 1,
  maxLimit: 10,
  maxQueue: 0,
  queueTimeoutMs: 10_000,
};

describe('Breaker adaptive bulkhead (bulkhead.algorithm)', () => {
  it('tells its algorithm how long each call held its slot and how many held one, and follows its limit', async () => {
    const { breaker, clock } = adaptive('catalog', { timeoutMs: false, bulkhead: AIMD_2_TO_10 });
    expect(recorded.made).toEqual([RESOLVED_2_TO_10]);
    expect(breaker.config.bulkhead).toEqual({
      algorithm: 'aimd',
      initialLimit: 2,
      minLimit: 1,
      maxLimit: 10,
      maxQueue: 0,
      queueTimeoutMs: 10_000,
    });
    expect(breaker.snapshot().bulkhead).toEqual({
      maxConcurrent: 2,
      algorithm: 'aimd',
      maxQueue: 0,
      active: 0,
      queued: 0,
    });

    const t0 = clock.monotonic();
    const gates = [deferred<string>(), deferred<string>()];
    const calls = gates.map((gate) => breaker.execute(() => gate.promise));
    await expect(breaker.execute(() => 'third')).rejects.toMatchObject({ reason: 'bulkhead-full' });
    clock.advance(30);
    gates[0]!.resolve('a');
    await calls[0];
    clock.advance(20);
    gates[1]!.resolve('b');
    expect(await Promise.all(calls)).toEqual(['a', 'b']);

    const expected: Sample[] = [
      [t0, 30, 1, false],
      [t0, 50, 2, false],
    ];
    expect(recorded.samples).toEqual(expected);
    const limit = limitAfter(RESOLVED_2_TO_10, expected);
    // Two calls used the whole cap and succeeded: it rose.
    expect(limit).toBeGreaterThan(2);
    expect(breaker.snapshot().bulkhead).toEqual({
      maxConcurrent: limit,
      algorithm: 'aimd',
      maxQueue: 0,
      active: 0,
      queued: 0,
    });
    // The risen cap admits that many calls at once.
    const more = Array.from({ length: limit }, () => deferred<string>());
    const running = more.map((gate) => breaker.execute(() => gate.promise));
    await expect(breaker.execute(() => 'over')).rejects.toMatchObject({ reason: 'bulkhead-full' });
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: limit });
    for (const gate of more) gate.resolve('x');
    await Promise.all(running);
  });

  it("backs off on the breaker's timeout, a failure that timed out and an overload; other failures tell nothing", async () => {
    const bulkhead = { algorithm: 'aimd', initialLimit: 10, minLimit: 2, maxLimit: 20 } as const;
    const { breaker, clock } = adaptive('search', { timeoutMs: 100, bulkhead });
    const resolved: ResolvedLimitOptions = { ...bulkhead, maxQueue: 0, queueTimeoutMs: 100 };
    const t0 = clock.monotonic();

    const hung = breaker.execute(() => new Promise<never>(() => {}));
    const outcome = expect(hung).rejects.toMatchObject({ code: 'CALL_TIMEOUT' });
    clock.advance(100);
    await outcome;
    const timedOut = Object.assign(new Error('socket timeout'), { name: 'TimeoutError' });
    await expect(
      breaker.execute(async () => {
        clock.advance(40);
        throw timedOut;
      }),
    ).rejects.toBe(timedOut);
    // A 400 is an answer of the dependency (a success, as the breaker counts it): its time is a measurement.
    const badRequest = Object.assign(new Error('bad request'), { status: 400 });
    await expect(breaker.execute(() => Promise.reject(badRequest))).rejects.toBe(badRequest);
    const serverError = Object.assign(new Error('boom'), { status: 500 });
    await expect(breaker.execute(() => Promise.reject(serverError))).rejects.toBe(serverError);
    const refused = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    await expect(breaker.execute(() => Promise.reject(refused))).rejects.toBe(refused);
    const tooMany = Object.assign(new Error('too many requests'), { status: 429 });
    await expect(breaker.execute(() => Promise.reject(tooMany))).rejects.toBe(tooMany);

    const expected: Sample[] = [
      [t0, 100, 1, true],
      [t0 + 100, 40, 1, true],
      [t0 + 140, 0, 1, false],
      [t0 + 140, 0, 1, true],
    ];
    expect(recorded.samples).toEqual(expected);
    const limit = limitAfter(resolved, expected);
    expect(limit).toBeLessThan(10);
    expect(breaker.snapshot().bulkhead).toMatchObject({ maxConcurrent: limit, active: 0 });
    expect(breaker.snapshot().totals.failures.total).toBe(4);
  });

  it('measures a call settled by hand (acquire) as the call objects do, and nothing for a released one', async () => {
    const { breaker, clock } = adaptive('orders', { timeoutMs: 1_000, bulkhead: AIMD_2_TO_10 });
    const t0 = clock.monotonic();
    const first = breaker.acquire();
    const second = breaker.acquire();
    expect(() => breaker.acquire()).toThrow(expect.objectContaining({ reason: 'bulkhead-full' }));
    clock.advance(15);
    second.release();
    first.succeed('ok');
    first.fail(new Error('late'));
    expect(recorded.samples).toEqual([[t0, 15, 1, false]]);
    expect(breaker.snapshot().bulkhead).toMatchObject({
      maxConcurrent: limitAfter({ ...RESOLVED_2_TO_10, queueTimeoutMs: 1_000 }, [
        [t0, 15, 1, false],
      ]),
      active: 0,
    });
  });

  it('lets waiters in at once when the cap rises', async () => {
    const bulkhead = {
      algorithm: 'aimd',
      initialLimit: 1,
      minLimit: 1,
      maxLimit: 5,
      maxQueue: 3,
    } as const;
    const { breaker, clock } = adaptive('pricing', { timeoutMs: false, bulkhead });
    const resolved: ResolvedLimitOptions = { ...bulkhead, queueTimeoutMs: 10_000 };
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof deferred<string>>>();
    const run = (id: string) => {
      gates.set(id, deferred<string>());
      return breaker.execute(() => {
        started.push(id);
        return gates.get(id)!.promise;
      });
    };
    const t0 = clock.monotonic();
    const calls = ['a', 'b', 'c', 'd'].map(run);
    expect(started).toEqual(['a']);
    expect(breaker.snapshot().bulkhead).toMatchObject({ maxConcurrent: 1, active: 1, queued: 3 });

    clock.advance(10);
    gates.get('a')!.resolve('A');
    await ticks();
    const risen = limitAfter(resolved, [[t0, 10, 1, false]]);
    expect(risen).toBeGreaterThan(1);
    // The slot 'a' freed, and every slot the risen cap adds, went to the oldest waiters at once.
    const admitted = Math.min(risen, 3);
    expect(started).toEqual(['a', 'b', 'c', 'd'].slice(0, 1 + admitted));
    expect(breaker.snapshot().bulkhead).toMatchObject({
      maxConcurrent: risen,
      active: admitted,
      queued: 3 - admitted,
    });
    for (const id of ['b', 'c', 'd']) gates.get(id)?.resolve(id.toUpperCase());
    expect(await Promise.all(calls)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('gives a freed slot to no waiter while the fallen cap is below the calls running', async () => {
    const bulkhead = {
      algorithm: 'aimd',
      initialLimit: 3,
      minLimit: 1,
      maxLimit: 5,
      maxQueue: 2,
    } as const;
    const { breaker, clock } = adaptive('stock', { timeoutMs: false, bulkhead });
    const resolved: ResolvedLimitOptions = { ...bulkhead, queueTimeoutMs: 10_000 };
    const t0 = clock.monotonic();
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof deferred<string>>>();
    const run = (id: string) => {
      gates.set(id, deferred<string>());
      return breaker.execute(() => {
        started.push(id);
        return gates.get(id)!.promise;
      });
    };
    const calls = ['a', 'b', 'c', 'd'].map(run);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 3, queued: 1 });

    clock.advance(5);
    const tooMany = Object.assign(new Error('too many requests'), { status: 429 });
    gates.get('a')!.reject(tooMany);
    await expect(calls[0]).rejects.toBe(tooMany);
    await ticks();
    const fallen = limitAfter(resolved, [[t0, 5, 1, true]]);
    expect(recorded.samples).toEqual([[t0, 5, 1, true]]);
    expect(fallen).toBeLessThan(3);
    // 'a' gave its slot back, but two calls still run: 'd' waits until fewer run than the cap.
    expect(started).toEqual(['a', 'b', 'c']);
    expect(breaker.snapshot().bulkhead).toEqual({
      maxConcurrent: fallen,
      algorithm: 'aimd',
      maxQueue: 2,
      active: 2,
      queued: 1,
    });
    for (const id of ['b', 'c']) gates.get(id)!.resolve(id);
    await ticks();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    gates.get('d')!.resolve('d');
    expect(await Promise.all(calls.slice(1))).toEqual(['b', 'c', 'd']);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
  });

  it('keeps what it measured through a reconfigure() that leaves the algorithm and its bounds alone', async () => {
    const { breaker, clock } = adaptive('ledger', { timeoutMs: false, bulkhead: AIMD_2_TO_10 });
    const t0 = clock.monotonic();
    const gates = [deferred<string>(), deferred<string>()];
    const calls = gates.map((gate) => breaker.execute(() => gate.promise));
    clock.advance(5);
    for (const gate of gates) gate.resolve('ok');
    await Promise.all(calls);
    const learned = limitAfter(RESOLVED_2_TO_10, [
      [t0, 5, 1, false],
      [t0, 5, 2, false],
    ]);
    expect(learned).toBeGreaterThan(2);

    breaker.reconfigure({ timeoutMs: false, bulkhead: { ...AIMD_2_TO_10, maxQueue: 4 } });
    expect(recorded.made).toHaveLength(1);
    expect(breaker.snapshot().bulkhead).toEqual({
      maxConcurrent: learned,
      algorithm: 'aimd',
      maxQueue: 4,
      active: 0,
      queued: 0,
    });

    // New bounds: a new algorithm, from the limit reached, within them.
    breaker.reconfigure({
      timeoutMs: false,
      bulkhead: { algorithm: 'aimd', minLimit: 1, maxLimit: learned - 1, initialLimit: 1 },
    });
    expect(recorded.made).toHaveLength(2);
    expect(recorded.made[1]).toMatchObject({ initialLimit: learned - 1, maxLimit: learned - 1 });
    expect(breaker.snapshot().bulkhead).toMatchObject({ maxConcurrent: learned - 1 });

    // A fixed cap: maxConcurrent, no algorithm; adaptive again: from initialLimit.
    breaker.reconfigure({ timeoutMs: false, bulkhead: { maxConcurrent: 7 } });
    expect(breaker.snapshot().bulkhead).toEqual({
      maxConcurrent: 7,
      maxQueue: 0,
      active: 0,
      queued: 0,
    });
    breaker.reconfigure({ timeoutMs: false, bulkhead: AIMD_2_TO_10 });
    expect(recorded.made).toHaveLength(3);
    expect(breaker.snapshot().bulkhead).toMatchObject({ maxConcurrent: 2, algorithm: 'aimd' });
  });

  it('lets waiters in when reconfigure() makes a fixed cap adaptive with a larger start', async () => {
    const { breaker } = adaptive('billing', {
      timeoutMs: false,
      bulkhead: { maxConcurrent: 1, maxQueue: 3 },
    });
    const started: string[] = [];
    const gate = deferred<string>();
    const calls = ['a', 'b', 'c'].map((id) =>
      breaker.execute(() => {
        started.push(id);
        return gate.promise;
      }),
    );
    expect(started).toEqual(['a']);
    breaker.reconfigure({
      timeoutMs: false,
      bulkhead: { algorithm: 'aimd', initialLimit: 3, maxQueue: 3 },
    });
    await ticks();
    expect(started).toEqual(['a', 'b', 'c']);
    expect(breaker.snapshot().bulkhead).toMatchObject({ maxConcurrent: 3, active: 3, queued: 0 });
    gate.resolve('done');
    await Promise.all(calls);
    // They all took their slots under the fixed cap's pipeline ('b' and 'c' waited in it): none is measured.
    expect(recorded.samples).toEqual([]);
    expect(breaker.snapshot().bulkhead).toMatchObject({ maxConcurrent: 3, active: 0 });
  });

  it('gives each child of a per-key family an algorithm of its own', async () => {
    const { breaker, clock } = adaptive('tenants', {
      timeoutMs: false,
      perKey: { maxKeys: 10 },
      bulkhead: AIMD_2_TO_10,
    });
    const t0 = clock.monotonic();
    const a = breaker.forKey('a');
    const gates = [deferred<string>(), deferred<string>()];
    const calls = gates.map((gate) => a.execute(() => gate.promise));
    clock.advance(8);
    for (const gate of gates) gate.resolve('ok');
    await Promise.all(calls);
    const risen = limitAfter(RESOLVED_2_TO_10, [
      [t0, 8, 1, false],
      [t0, 8, 2, false],
    ]);
    expect(risen).toBeGreaterThan(2);
    expect(a.snapshot().bulkhead).toMatchObject({ maxConcurrent: risen, algorithm: 'aimd' });
    expect(breaker.forKey('b').snapshot().bulkhead).toMatchObject({
      maxConcurrent: 2,
      algorithm: 'aimd',
    });
  });

  it('refuses a call at the adaptive cap in peek(), as a call would be', () => {
    const { breaker } = adaptive('peeked', {
      timeoutMs: false,
      bulkhead: { algorithm: 'gradient', initialLimit: 1 },
    });
    const gate = deferred<string>();
    const running = breaker.execute(() => gate.promise);
    expect(breaker.peek()).toMatchObject({ permitted: false, reason: 'bulkhead-full' });
    gate.resolve('ok');
    return running;
  });

  it.each([
    [
      { algoritm: 'aimd' },
      'bulkhead.algoritm',
      'Circuit breaker "payments": unknown option "bulkhead.algoritm". Known options: bulkhead.maxConcurrent, bulkhead.algorithm, bulkhead.initialLimit, bulkhead.minLimit, bulkhead.maxLimit, bulkhead.maxQueue, bulkhead.queueTimeoutMs. Did you mean "bulkhead.algorithm"?',
    ],
    [
      { algorithm: 'aimd', minlimit: 3 },
      'bulkhead.minlimit',
      'Circuit breaker "payments": unknown option "bulkhead.minlimit". Known options: bulkhead.maxConcurrent, bulkhead.algorithm, bulkhead.initialLimit, bulkhead.minLimit, bulkhead.maxLimit, bulkhead.maxQueue, bulkhead.queueTimeoutMs. Did you mean "bulkhead.minLimit"?',
    ],
    [
      { algorithm: 'fixed', initialLimit: 4 },
      'bulkhead.algorithm',
      `Circuit breaker "payments": option "bulkhead.algorithm" must be 'gradient' or 'aimd', got "fixed".`,
    ],
    [
      { algorithm: 'aimd', maxConcurrent: 5 },
      'bulkhead.maxConcurrent',
      'Circuit breaker "payments": option "bulkhead.maxConcurrent" is a fixed cap and "bulkhead.algorithm" an adaptive one: a bulkhead has one cap. Remove "bulkhead.maxConcurrent", or "bulkhead.algorithm" (an adaptive cap starts at "bulkhead.initialLimit").',
    ],
    [
      { maxConcurrent: 5, minLimit: 2 },
      'bulkhead.minLimit',
      `Circuit breaker "payments": option "bulkhead.minLimit" belongs to an adaptive cap and needs "bulkhead.algorithm" ('gradient' or 'aimd'). Add "bulkhead.algorithm", or remove "bulkhead.minLimit" for a fixed cap ("bulkhead.maxConcurrent").`,
    ],
    [
      { maxLimit: 50 },
      'bulkhead.maxLimit',
      `Circuit breaker "payments": option "bulkhead.maxLimit" belongs to an adaptive cap and needs "bulkhead.algorithm" ('gradient' or 'aimd'). Add "bulkhead.algorithm", or remove "bulkhead.maxLimit" for a fixed cap ("bulkhead.maxConcurrent").`,
    ],
    [
      { algorithm: 'aimd', minLimit: 5, maxLimit: 2 },
      'bulkhead.maxLimit',
      'Circuit breaker "payments": option "bulkhead.maxLimit" (2) is below "bulkhead.minLimit" (5): no limit fits between them. Raise "bulkhead.maxLimit" or lower "bulkhead.minLimit".',
    ],
    [
      { algorithm: 'gradient', initialLimit: 50, maxLimit: 10 },
      'bulkhead.initialLimit',
      'Circuit breaker "payments": option "bulkhead.initialLimit" (50) must be within "bulkhead.minLimit" (1) and "bulkhead.maxLimit" (10). Move it into that range, or widen the range.',
    ],
    [
      { algorithm: 'gradient', minLimit: 0 },
      'bulkhead.minLimit',
      'Circuit breaker "payments": option "bulkhead.minLimit" must be an integer >= 1, got 0.',
    ],
  ])('refuses bulkhead %j, naming the breaker and %s', (bulkhead, option, message) => {
    let error: unknown;
    try {
      expect(new Breaker('payments', { bulkhead } as unknown as BreakerOptions)).toBeUndefined();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(BreakerConfigError);
    expect(error).toMatchObject({ breakerName: 'payments', option, message });
  });

  it('starts an adaptive cap at 20 within its bounds when initialLimit is not given', () => {
    const { breaker } = adaptive('defaults', { bulkhead: { algorithm: 'gradient', maxLimit: 8 } });
    expect(breaker.config.bulkhead).toEqual({
      algorithm: 'gradient',
      initialLimit: 8,
      minLimit: 1,
      maxLimit: 8,
      maxQueue: 0,
      queueTimeoutMs: 2_000,
    });
    expect(new Breaker('wide', { bulkhead: { algorithm: 'aimd' } }).config.bulkhead).toMatchObject({
      initialLimit: 20,
      minLimit: 1,
      maxLimit: 1000,
    });
  });
});
