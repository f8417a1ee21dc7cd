import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Breaker,
  BreakerConfigError,
  CallRejectedError,
  isCallRejected,
  type RejectedEvent,
} from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { ManualClock as TestingClock } from '../../lib/testing/manual-clock.js';

/** Lets queued continuations (a slot handed over, a finally) run. */
const ticks = async (n = 6) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe('Breaker bulkhead', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('rejects calls past maxConcurrent with reason bulkhead-full and code BULKHEAD_FULL, never as failures', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'inventory',
      { consecutiveFailures: 1, timeoutMs: false, bulkhead: { maxConcurrent: 2 } },
      { clock },
    );
    const rejected: RejectedEvent[] = [];
    breaker.on('rejected', (event) => rejected.push(event));
    const gates = [deferred<string>(), deferred<string>()];
    const running = gates.map((gate) => breaker.execute(() => gate.promise));
    const errors: unknown[] = [];
    for (let i = 0; i < 50; i++) await breaker.execute(() => 'never').catch((e) => errors.push(e));

    expect(errors).toHaveLength(50);
    const first = errors[0] as CallRejectedError;
    expect(first).toBeInstanceOf(CallRejectedError);
    expect(first).toMatchObject({
      code: 'BULKHEAD_FULL',
      reason: 'bulkhead-full',
      breakerName: 'inventory',
      state: 'closed',
      retryAfterMs: undefined,
    });
    expect(isCallRejected(first)).toBe(true);
    expect(first.message).toBe(
      'Circuit breaker "inventory" rejected the call: too many calls are in flight and its queue is full.',
    );
    expect(rejected).toHaveLength(50);
    expect(rejected[0]!.reason).toBe('bulkhead-full');
    const snapshot = breaker.snapshot();
    expect(snapshot.state).toBe('closed');
    expect(snapshot.bulkhead).toEqual({ maxConcurrent: 2, maxQueue: 0, active: 2, queued: 0 });
    expect(snapshot.totals.rejected['bulkhead-full']).toBe(50);
    expect(snapshot.totals.rejected.total).toBe(50);
    expect(snapshot.totals.failures.total).toBe(0);
    expect(snapshot.totals.admitted).toBe(2);

    gates[0]!.resolve('a');
    gates[1]!.resolve('b');
    expect(await Promise.all(running)).toEqual(['a', 'b']);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
    expect(await breaker.execute(() => 'free again')).toBe('free again');
  });

  it('queues up to maxQueue calls and hands a freed slot to the oldest, which only then starts', async () => {
    const breaker = new Breaker('q', {
      timeoutMs: false,
      bulkhead: { maxConcurrent: 1, maxQueue: 2, queueTimeoutMs: 1_000 },
    });
    const started: string[] = [];
    const gates = { a: deferred<string>(), b: deferred<string>(), c: deferred<string>() };
    const run = (id: 'a' | 'b' | 'c') =>
      breaker.execute(() => {
        started.push(id);
        return gates[id].promise;
      });
    const a = run('a');
    const b = run('b');
    const c = run('c');
    const d = breaker.execute(() => 'd');
    await expect(d).rejects.toMatchObject({ reason: 'bulkhead-full' });
    expect(started).toEqual(['a']);
    expect(breaker.snapshot().bulkhead).toEqual({
      maxConcurrent: 1,
      maxQueue: 2,
      active: 1,
      queued: 2,
    });

    gates.a.resolve('A');
    expect(await a).toBe('A');
    await ticks();
    expect(started).toEqual(['a', 'b']);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 1 });
    gates.b.resolve('B');
    gates.c.resolve('C');
    expect(await b).toBe('B');
    expect(await c).toBe('C');
    expect(started).toEqual(['a', 'b', 'c']);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
  });

  it('ends a wait after queueTimeoutMs with bulkhead-full; the call never starts', async () => {
    const breaker = new Breaker('wait', {
      timeoutMs: 5_000,
      bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 100 },
    });
    const gate = deferred<string>();
    const first = breaker.execute(() => gate.promise);
    const fn = vi.fn(() => 'late');
    const queued = breaker.execute(fn);
    const outcome = expect(queued).rejects.toMatchObject({
      reason: 'bulkhead-full',
      code: 'BULKHEAD_FULL',
    });
    vi.advanceTimersByTime(99);
    await ticks();
    expect(breaker.snapshot().bulkhead?.queued).toBe(1);
    vi.advanceTimersByTime(1);
    await outcome;
    expect(fn).not.toHaveBeenCalled();
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 0 });
    gate.resolve('ok');
    expect(await first).toBe('ok');
    expect(breaker.snapshot().totals).toMatchObject({
      admitted: 1,
      successes: 1,
      failures: { total: 0 },
      rejected: { 'bulkhead-full': 1 },
    });
  });

  it("a queue timeout runs on the clock's timers, as deadlines do: the testing kit's ManualClock ends it", async () => {
    vi.useRealTimers();
    const clock = new TestingClock();
    const breaker = new Breaker(
      'ledger',
      { timeoutMs: false, bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 100 } },
      { clock },
    );
    const gate = deferred<string>();
    const holder = breaker.execute(() => gate.promise);
    let outcome: unknown = 'pending';
    const started = vi.fn(() => 'never');
    void breaker.execute(started).then(
      (value) => (outcome = value),
      (error: unknown) => (outcome = error),
    );
    expect(clock.pendingTimers).toBe(1);
    await clock.advanceAsync(99);
    expect(outcome).toBe('pending');
    await clock.advanceAsync(1);
    expect(outcome).toMatchObject({ reason: 'bulkhead-full', breakerName: 'ledger' });
    expect(started).not.toHaveBeenCalled();
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 0 });
    expect(clock.pendingTimers).toBe(0);
    gate.resolve('done');
    await expect(holder).resolves.toBe('done');
  });

  it("ends a wait when the caller aborts, with the caller's reason, counting nothing", async () => {
    const breaker = new Breaker('abort', {
      timeoutMs: false,
      bulkhead: { maxConcurrent: 1, maxQueue: 1 },
    });
    const gate = deferred<string>();
    const first = breaker.execute(() => gate.promise);
    const controller = new AbortController();
    const fn = vi.fn(() => 'never');
    const queued = breaker.execute(fn, { signal: controller.signal });
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(queued).rejects.toBe(reason);
    expect(fn).not.toHaveBeenCalled();
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 0 });
    // The aborted waiter is gone: the freed slot goes back to the pool, not to it.
    gate.resolve('done');
    await first;
    await ticks();
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
    expect(breaker.snapshot().totals).toMatchObject({
      admitted: 1,
      ignored: 0,
      rejected: { total: 0 },
    });
  });

  it('an abort in the same turn as the slot is handed over ends the wait: fn never runs, the slot goes back, nothing counts', async () => {
    const breaker = new Breaker('handover', {
      timeoutMs: 1_000,
      bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 500 },
    });
    const permit = breaker.acquire();
    const controller = new AbortController();
    const fn = vi.fn(() => new Promise<string>(() => undefined));
    const queued = breaker.execute(fn, { signal: controller.signal });
    const reason = new Error('caller gave up');
    // The slot goes to the waiter synchronously; the abort lands before the waiter's turn.
    permit.succeed('done');
    controller.abort(reason);
    await expect(queued).rejects.toBe(reason);
    expect(fn).not.toHaveBeenCalled();
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(breaker.snapshot().totals).toMatchObject({
      admitted: 1,
      successes: 1,
      ignored: 0,
      timeouts: 0,
      failures: { total: 0 },
    });
  });

  it('a queued call granted a slot while the breaker opened is rejected as open and gives the slot back', async () => {
    const breaker = new Breaker('opens', {
      consecutiveFailures: 1,
      timeoutMs: false,
      bulkhead: { maxConcurrent: 1, maxQueue: 1 },
    });
    const gate = deferred<string>();
    const first = breaker.execute(() => gate.promise);
    const queued = breaker.execute(() => 'never');
    gate.reject(new Error('boom'));
    await expect(first).rejects.toThrow('boom');
    await expect(queued).rejects.toMatchObject({ reason: 'open' });
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
  });

  it('a call the state refuses never waits in the queue: forced open, it is refused at once as isolated', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'ledger',
      { timeoutMs: false, bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 100 } },
      { clock },
    );
    const gate = deferred<string>();
    const holder = breaker.execute(() => gate.promise);
    breaker.force('open', { reason: 'maintenance' });
    expect(breaker.peek()).toMatchObject({ permitted: false, reason: 'isolated' });
    const fn = vi.fn(() => 'never');
    const outcome = breaker.execute(fn).catch((error: unknown) => error);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 0 });
    await ticks();
    expect(await outcome).toMatchObject({ reason: 'isolated', breakerName: 'ledger' });
    expect(() => breaker.acquire()).toThrow(expect.objectContaining({ reason: 'isolated' }));
    expect(fn).not.toHaveBeenCalled();
    expect(breaker.snapshot().totals.rejected).toMatchObject({ isolated: 2, 'bulkhead-full': 0 });
    gate.resolve('done');
    await expect(holder).resolves.toBe('done');
  });

  it('calls waiting for a slot are refused at once when the breaker opens or is forced open', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'ledger',
      {
        consecutiveFailures: 1,
        timeoutMs: false,
        bulkhead: { maxConcurrent: 2, maxQueue: 2, queueTimeoutMs: 100 },
      },
      { clock },
    );
    const failing = deferred<string>();
    const holding = deferred<string>();
    const first = breaker.execute(() => failing.promise);
    const second = breaker.execute(() => holding.promise);
    const fn = vi.fn(() => 'never');
    const waiters = [breaker.execute(fn), breaker.execute(fn)].map((p) =>
      p.catch((error: unknown) => error),
    );
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 2, queued: 2 });
    failing.reject(new Error('down'));
    await expect(first).rejects.toThrow('down');
    // The first freed slot would go to a waiter: the breaker opened first, so neither waits on.
    expect(await Promise.all(waiters)).toMatchObject([{ reason: 'open' }, { reason: 'open' }]);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 0 });

    breaker.reset();
    const third = breaker.execute(() => holding.promise);
    const queued = breaker.execute(fn).catch((error: unknown) => error);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 2, queued: 1 });
    breaker.force('open', { reason: 'maintenance' });
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 2, queued: 0 });
    expect(await queued).toMatchObject({ reason: 'isolated' });
    expect(fn).not.toHaveBeenCalled();
    holding.resolve('done');
    await expect(second).resolves.toBe('done');
    await expect(third).resolves.toBe('done');
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
    // The queue timeouts were due on the process's timers: let their timer run out here, not in the next test.
    vi.advanceTimersByTime(100);
  });

  it('a waiter sent away by a force that is released in the same turn waits on for its slot', async () => {
    // The testing kit's clock: the queue timeout waits on it, not on the process's timers.
    const breaker = new Breaker(
      'ledger',
      { timeoutMs: false, bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 100 } },
      { clock: new TestingClock() },
    );
    const gate = deferred<string>();
    const holder = breaker.execute(() => gate.promise);
    const queued = breaker.execute(() => 'second');
    breaker.force('open', { reason: 'mistake' });
    breaker.release();
    await ticks();
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 1 });
    gate.resolve('first');
    await expect(holder).resolves.toBe('first');
    await expect(queued).resolves.toBe('second');
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
    expect(breaker.snapshot().totals.rejected.total).toBe(0);
  });

  it('a call that reaches its deadline gives its slot back at once, to the oldest waiter', async () => {
    const breaker = new Breaker('deadline', {
      timeoutMs: 200,
      bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 200 },
    });
    const hung = breaker.execute(() => new Promise(() => undefined));
    const outcome = expect(hung).rejects.toMatchObject({ name: 'CallTimeoutError' });
    const started = vi.fn(() => 'second');
    const queued = breaker.execute(started);
    vi.advanceTimersByTime(200);
    await outcome;
    expect(await queued).toBe('second');
    expect(started).toHaveBeenCalledTimes(1);
    expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
    expect(breaker.snapshot().totals).toMatchObject({ timeouts: 1, successes: 1 });
  });

  it('children of a per-key family each have a bulkhead of their own; a forced-disabled call holds no slot', async () => {
    const family = new Breaker('hosts', {
      timeoutMs: false,
      perKey: { maxKeys: 10 },
      bulkhead: { maxConcurrent: 1 },
    });
    const gate = deferred<string>();
    const a = family.forKey('a').execute(() => gate.promise);
    expect(await family.forKey('b').execute(() => 'b')).toBe('b');
    await expect(family.forKey('a').execute(() => 'a2')).rejects.toMatchObject({
      reason: 'bulkhead-full',
    });
    family.forKey('a').force('disabled', { reason: 'bypass' });
    expect(await family.forKey('a').execute(() => 'uncounted')).toBe('uncounted');
    gate.resolve('a');
    expect(await a).toBe('a');
  });

  it('acquire() holds a slot until the permit settles, and never queues', () => {
    const breaker = new Breaker('permits', {
      timeoutMs: false,
      bulkhead: { maxConcurrent: 1, maxQueue: 5 },
    });
    const permit = breaker.acquire();
    expect(() => breaker.acquire()).toThrow(
      expect.objectContaining({ reason: 'bulkhead-full', code: 'BULKHEAD_FULL' }),
    );
    expect(breaker.snapshot().bulkhead?.active).toBe(1);
    permit.succeed('ok');
    expect(breaker.snapshot().bulkhead?.active).toBe(0);
    breaker.acquire().release();
    expect(breaker.snapshot().bulkhead?.active).toBe(0);
  });

  it('acquire() while the breaker rejects gives the slot back at once', () => {
    const breaker = new Breaker('isolated', { bulkhead: { maxConcurrent: 1 } });
    breaker.isolate();
    expect(() => breaker.acquire()).toThrow(expect.objectContaining({ reason: 'isolated' }));
    expect(breaker.snapshot().bulkhead?.active).toBe(0);
  });

  it('reconfigure(): a larger cap lets waiters in at once; dropping the bulkhead lets every waiter in', async () => {
    const options = { timeoutMs: false as const, bulkhead: { maxConcurrent: 1, maxQueue: 3 } };
    const breaker = new Breaker('grow', options);
    const gate = deferred<string>();
    const started: number[] = [];
    const calls = [0, 1, 2, 3].map((i) =>
      breaker.execute(() => {
        started.push(i);
        return gate.promise;
      }),
    );
    expect(started).toEqual([0]);
    breaker.reconfigure({ ...options, bulkhead: { maxConcurrent: 2, maxQueue: 3 } });
    await ticks();
    expect(started).toEqual([0, 1]);
    expect(breaker.snapshot().bulkhead).toMatchObject({ maxConcurrent: 2, active: 2, queued: 2 });
    breaker.reconfigure({ timeoutMs: false });
    await ticks();
    expect(started).toEqual([0, 1, 2, 3]);
    expect(breaker.snapshot().bulkhead).toBeUndefined();
    gate.resolve('x');
    expect(await Promise.all(calls)).toEqual(['x', 'x', 'x', 'x']);
  });

  it('executeMethod() (the decorator) takes the same slots', async () => {
    const breaker = new Breaker('method', { timeoutMs: false, bulkhead: { maxConcurrent: 1 } });
    const gate = deferred<string>();
    const withSignal = vi.fn();
    const first = breaker.executeMethod(() => gate.promise, undefined, [], withSignal);
    await expect(
      breaker.executeMethod(async () => 'second', undefined, [], withSignal),
    ).rejects.toMatchObject({ reason: 'bulkhead-full' });
    gate.resolve('first');
    expect(await first).toBe('first');
  });

  it('refuses a queue wait longer than the deadline, and every bad value, naming the option', () => {
    expect(
      () =>
        new Breaker('bad', {
          timeoutMs: 1_000,
          bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 2_000 },
        }),
    ).toThrow(
      new BreakerConfigError(
        'Circuit breaker "bad": option "bulkhead.queueTimeoutMs" (2000) cannot exceed "timeoutMs" (1000): a call would wait in the queue past its own deadline. Lower "bulkhead.queueTimeoutMs" or raise "timeoutMs".',
        'bad',
        'bulkhead.queueTimeoutMs',
      ),
    );
    expect(() => new Breaker('bad', { bulkhead: { maxConcurrent: 0 } })).toThrow(
      'Circuit breaker "bad": option "bulkhead.maxConcurrent" must be an integer >= 1, got 0.',
    );
    expect(() => new Breaker('bad', { bulkhead: {} as never })).toThrow(
      'option "bulkhead.maxConcurrent" must be an integer >= 1, got undefined.',
    );
    expect(() => new Breaker('bad', { bulkhead: { maxConcurrent: 1, maxQueue: -1 } })).toThrow(
      'option "bulkhead.maxQueue" must be an integer >= 0',
    );
    expect(() => new Breaker('bad', { bulkhead: { maxConcurrent: 1, size: 1 } as never })).toThrow(
      'unknown option "bulkhead.size"',
    );
    // The default wait is the call's own deadline.
    expect(
      new Breaker('ok', { timeoutMs: 750, bulkhead: { maxConcurrent: 1 } }).config.bulkhead,
    ).toEqual({
      maxConcurrent: 1,
      maxQueue: 0,
      queueTimeoutMs: 750,
    });
  });
});
