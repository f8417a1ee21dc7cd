import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  CallRejectedError,
  InjectedFaultError,
  type BreakerOptions,
  type StateChangeEvent,
} from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { flush } from '../helpers/flush.js';

const START = 1_767_225_600_000;

function breakerOn(clock: ManualClock, options: BreakerOptions = {}, name = 'payments') {
  return new Breaker(
    name,
    { timeoutMs: false, consecutiveFailures: 2, openDurationMs: 1_000, jitter: 0, ...options },
    { clock, faultInjection: true },
  );
}

/** Runs `count` calls one after another; returns which ones reached the dependency and what each settled with. */
async function calls(breaker: Breaker, count: number) {
  const reached: number[] = [];
  const outcomes: string[] = [];
  for (let i = 1; i <= count; i++) {
    await breaker
      .execute(() => {
        reached.push(i);
        return 'ok';
      })
      .then(
        (value) => outcomes.push(value),
        (error: Error) => outcomes.push(error.name),
      );
  }
  return { reached, outcomes };
}

describe('Breaker.injectFault()', () => {
  it('is refused unless the breaker was built with faultInjection: true, with what to do', () => {
    const breaker = new Breaker('payments');
    expect(() => breaker.injectFault({ fail: true })).toThrow(
      new TypeError(
        'Circuit breaker "payments": fault injection is off, so injectFault() is refused (it must never happen by mistake in production). Turn it on with CircuitBreakerModule.forRoot({ faultInjection: true }) for a game day, use CircuitBreakerTestingModule from nestjs-circuit-breaker/testing in tests (on by default), or pass { faultInjection: true } in the deps of a Breaker built by hand.',
      ),
    );
    expect(() => new Breaker('x', {}, { faultInjection: 'yes' as never })).toThrow(
      'Circuit breaker "x": faultInjection must be true, false or left out, got "yes".',
    );
  });

  it('fail: calls fail with InjectedFaultError without reaching the dependency, open the breaker, and remove() restores them', async () => {
    const clock = new ManualClock(START);
    const breaker = breakerOn(clock);
    const changes: StateChangeEvent[] = [];
    breaker.on('stateChange', (change) => changes.push(change));
    const fault = breaker.injectFault({ fail: true });
    const error = await breaker.execute(() => 'ok').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InjectedFaultError);
    expect((error as InjectedFaultError).message).toBe(
      'Circuit breaker "payments": injected failure (fault injection); the dependency was not called.',
    );
    expect([(error as InjectedFaultError).code, (error as InjectedFaultError).status]).toEqual([
      'INJECTED_FAULT',
      undefined,
    ]);
    expect(await calls(breaker, 2)).toEqual({
      reached: [],
      outcomes: ['InjectedFaultError', 'CallRejectedError'],
    });
    expect(changes.map((c) => [c.from, c.to, c.reason, c.at])).toEqual([
      ['closed', 'open', 'consecutive-failures', START],
    ]);
    expect(breaker.snapshot().totals).toMatchObject({
      admitted: 2,
      failures: { total: 2, other: 2 },
      rejected: { open: 1, total: 1 },
    });
    expect([fault.injected, fault.active]).toEqual([2, true]);
    expect(breaker.snapshot().injectedFault).toEqual({
      fail: true,
      latencyMs: 0,
      rate: 1,
      drawn: false,
      injected: 2,
    });
    fault.remove();
    expect([fault.injected, fault.active]).toEqual([2, false]);
    expect(breaker.snapshot().injectedFault).toBeUndefined();
    // The open duration on the manual clock, then the probe reaches the dependency and closes the breaker.
    clock.advance(1_000);
    expect(await calls(breaker, 2)).toEqual({ reached: [1, 2], outcomes: ['ok', 'ok'] });
    expect(changes.slice(1).map((c) => [c.from, c.to, c.reason, c.at])).toEqual([
      ['open', 'half-open', 'open-duration-elapsed', START + 1_000],
      ['half-open', 'closed', 'probes-succeeded', START + 1_000],
    ]);
  });

  it('a probe gets the fault too: it fails and the breaker reopens (reason probe-failed)', async () => {
    const clock = new ManualClock(START);
    const breaker = breakerOn(clock);
    breaker.injectFault({ fail: true });
    await calls(breaker, 2);
    clock.advance(1_000);
    expect(breaker.state).toBe('half-open');
    expect(await calls(breaker, 1)).toEqual({ reached: [], outcomes: ['InjectedFaultError'] });
    expect(breaker.snapshot().lastTransition).toMatchObject({
      from: 'half-open',
      to: 'open',
      reason: 'probe-failed',
    });
  });

  it('fail: an error of your own (or a function making one) is what the call rejects with and what the classifier sees', async () => {
    const clock = new ManualClock(START);
    const seen: unknown[] = [];
    const breaker = breakerOn(clock, {
      classify: (error) => {
        seen.push(error);
        return undefined;
      },
    });
    const own = Object.assign(new Error('bad gateway'), { status: 502 });
    breaker.injectFault({ fail: own });
    expect(await breaker.execute(() => 'ok').catch((e: unknown) => e)).toBe(own);
    let made = 0;
    breaker.injectFault({ fail: () => new Error(`made ${++made}`) });
    expect(await breaker.execute(() => 'ok').catch((e: Error) => e.message)).toBe('made 1');
    expect(seen.map((e) => (e as Error).message)).toEqual(['bad gateway', 'made 1']);
    expect(breaker.snapshot().totals.failures).toMatchObject({ server: 1, other: 1 });
  });

  it('rate spreads the fault evenly and deterministically: 0.25 is calls 1, 5, 9', async () => {
    const breaker = breakerOn(new ManualClock(START), { consecutiveFailures: 100 });
    const fault = breaker.injectFault({ fail: true, rate: 0.25 });
    const { reached } = await calls(breaker, 12);
    expect(reached).toEqual([2, 3, 4, 6, 7, 8, 10, 11, 12]);
    expect(fault.injected).toBe(3);
    // 0.3 multiplied out is not exact in floating point: still 3 in 10.
    const other = breakerOn(new ManualClock(START), { consecutiveFailures: 100 }, 'other');
    other.injectFault({ fail: true, rate: 0.3 });
    expect((await calls(other, 10)).reached).toEqual([2, 3, 5, 6, 8, 9, 10]);
  });

  it('rate with a seeded random: a call gets the fault when its draw is below the rate', async () => {
    const breaker = breakerOn(new ManualClock(START), { consecutiveFailures: 100 });
    const draws = [0.1, 0.9, 0.49, 0.5, 0.7, 0];
    breaker.injectFault({ fail: true, rate: 0.5, random: () => draws.shift()! });
    expect((await calls(breaker, 6)).reached).toEqual([2, 4, 5]);
  });

  it('latencyMs: the call waits on the manual clock, then reaches the dependency; the delay is its duration', async () => {
    const clock = new ManualClock(START);
    const breaker = breakerOn(clock, { timeoutMs: 1_000 });
    const durations: number[] = [];
    breaker.on('success', (event) => durations.push(event.durationMs));
    const fault = breaker.injectFault({ latencyMs: 300 });
    let reached = false;
    let settled: unknown;
    void breaker
      .execute(() => {
        reached = true;
        return 'ok';
      })
      .then((value) => (settled = value));
    await flush();
    clock.advance(299);
    await flush();
    expect([reached, settled]).toEqual([false, undefined]);
    clock.advance(1);
    await flush();
    expect([reached, settled, durations]).toEqual([true, 'ok', [300]]);
    expect([fault.injected, clock.pendingTimers]).toEqual([1, 0]);
  });

  it('latencyMs beyond the deadline: the call times out on the manual clock and never reaches the dependency', async () => {
    const clock = new ManualClock(START);
    const breaker = breakerOn(clock, { timeoutMs: 1_000 });
    breaker.injectFault({ latencyMs: 5_000 });
    let reached = false;
    const result = breaker
      .execute(() => {
        reached = true;
        return 'ok';
      })
      .catch((e: unknown) => e);
    clock.advance(1_000);
    const error = await result;
    expect(error).toBeInstanceOf(CallTimeoutError);
    expect((error as CallTimeoutError).timeoutMs).toBe(1_000);
    // The latency's own timer went with the call.
    expect(clock.pendingTimers).toBe(0);
    clock.advance(10_000);
    await flush();
    expect(reached).toBe(false);
    expect(breaker.snapshot().totals).toMatchObject({ timeouts: 1, failures: { timeout: 1 } });
  });

  it('latency then failure: the call fails once the latency has passed', async () => {
    const clock = new ManualClock(START);
    const breaker = breakerOn(clock);
    breaker.injectFault({ latencyMs: 200, fail: true });
    const result = breaker.execute(() => 'ok').catch((e: Error) => e.name);
    await clock.advanceAsync(199);
    expect(breaker.snapshot().totals.failures.total).toBe(0);
    await clock.advanceAsync(1);
    expect(await result).toBe('InjectedFaultError');
    expect(breaker.snapshot().totals.failures.total).toBe(1);
  });

  it('overload: a 429 with Retry-After pauses the breaker without opening it', async () => {
    const clock = new ManualClock(START);
    const breaker = breakerOn(clock);
    const fault = breaker.injectFault({ overload: { retryAfterMs: 2_000 } });
    expect(breaker.snapshot().injectedFault).toEqual({
      fail: false,
      overload: { retryAfterMs: 2_000 },
      latencyMs: 0,
      rate: 1,
      drawn: false,
      injected: 0,
    });
    const error = (await breaker
      .execute(() => 'ok')
      .catch((e: unknown) => e)) as InjectedFaultError;
    expect([error.name, error.fault, error.status, error.retryAfterMs, error.message]).toEqual([
      'InjectedFaultError',
      'overload',
      429,
      2_000,
      'Circuit breaker "payments": injected overload (Retry-After 2000 ms) (fault injection); the dependency was not called.',
    ]);
    fault.remove();
    const paused = (await breaker
      .execute(() => 'ok')
      .catch((e: unknown) => e)) as CallRejectedError;
    expect([paused.reason, paused.retryAfterMs, breaker.state]).toEqual([
      'retry-after',
      2_000,
      'closed',
    ]);
    clock.advance(2_000);
    expect(await breaker.execute(() => 'ok')).toBe('ok');
    expect(breaker.snapshot().totals).toMatchObject({ overloads: 1, failures: { total: 0 } });
  });

  it('survives reset() and transitions; a second injection replaces the first', async () => {
    const clock = new ManualClock(START);
    const breaker = breakerOn(clock);
    const first = breaker.injectFault({ fail: true });
    await calls(breaker, 2);
    expect(breaker.state).toBe('open');
    breaker.reset();
    expect((await calls(breaker, 1)).reached).toEqual([]);
    breaker.reset();
    const second = breaker.injectFault({ fail: true, rate: 0.5 });
    expect([first.active, second.active]).toEqual([false, true]);
    // The replaced handle's remove() no longer concerns the breaker.
    first.remove();
    expect((await calls(breaker, 2)).reached).toEqual([2]);
    second.remove();
    expect((await calls(breaker, 2)).reached).toEqual([1, 2]);
  });

  it('a per-key family injects into every child, present and future; remove() restores them all', async () => {
    const family = breakerOn(new ManualClock(START), { perKey: { maxKeys: 10 } }, 'inventory');
    const a = family.forKey('a');
    const fault = family.injectFault({ fail: true });
    const b = family.forKey('b');
    expect(await calls(a, 1)).toEqual({ reached: [], outcomes: ['InjectedFaultError'] });
    expect(await calls(b, 1)).toEqual({ reached: [], outcomes: ['InjectedFaultError'] });
    fault.remove();
    expect((await calls(a, 1)).reached).toEqual([1]);
    expect((await calls(b, 1)).reached).toEqual([1]);
    expect((await calls(family.forKey('c'), 1)).reached).toEqual([1]);
  });

  it("a child's own injection gives way to its family's", async () => {
    const family = breakerOn(new ManualClock(START), { perKey: { maxKeys: 10 } }, 'inventory');
    const own = family.forKey('a').injectFault({ latencyMs: 10 });
    const all = family.injectFault({ fail: true });
    expect([own.active, all.active]).toEqual([false, true]);
    expect(await calls(family.forKey('a'), 1)).toEqual({
      reached: [],
      outcomes: ['InjectedFaultError'],
    });
  });

  it('a breaker forced disabled is switched off: its calls pass untouched, fault or not', async () => {
    const breaker = breakerOn(new ManualClock(START));
    breaker.injectFault({ fail: true });
    breaker.force('disabled', { reason: 'kill switch' });
    expect(await calls(breaker, 2)).toEqual({ reached: [1, 2], outcomes: ['ok', 'ok'] });
    breaker.force('metrics-only', { reason: 'never trip' });
    expect((await calls(breaker, 3)).reached).toEqual([]);
    expect(breaker.state).toBe('metrics-only');
  });

  it('acquire() hands out the faulted call: perform() turns the caller work into the fault', async () => {
    const breaker = breakerOn(new ManualClock(START));
    breaker.injectFault({ fail: true });
    const permit = breaker.acquire() as ReturnType<Breaker['acquire']> & {
      perform(work: () => unknown): unknown;
    };
    let reached = false;
    expect(() =>
      permit.perform(() => {
        reached = true;
      }),
    ).toThrow(InjectedFaultError);
    expect(reached).toBe(false);
    expect(permit.fail(new InjectedFaultError('payments', 'failure'))).toBe('failure');
  });

  it('checks what it is given, naming the option', () => {
    const breaker = breakerOn(new ManualClock(START));
    expect(() => breaker.injectFault({} as never)).toThrow(
      'Circuit breaker "payments": injectFault() was given no fault. Pass fail, latencyMs or overload (with rate to apply it to a share of calls).',
    );
    expect(() => breaker.injectFault({ fail: true, rate: 0 })).toThrow(
      'Circuit breaker "payments": injectFault() option "rate" must be a number in (0, 1], got 0. Fix it, or leave it out.',
    );
    expect(() => breaker.injectFault({ fail: true, overload: {} })).toThrow(
      'Circuit breaker "payments": injectFault() takes fail or overload, not both: a call either fails or is refused as overloaded. Inject one of them.',
    );
    expect(() => breaker.injectFault({ fial: true } as never)).toThrow(
      'Circuit breaker "payments": injectFault() has no option "fial". Did you mean "fail"? Use fail, latencyMs, overload, rate or random.',
    );
    expect(() => breaker.injectFault({ latencyMs: -1 })).toThrow(
      'Circuit breaker "payments": injectFault() option "latencyMs" must be a number of milliseconds from 0 to 2147483647, got -1. Fix it, or leave it out.',
    );
  });
});

describe('per-call deadlines on a clock with timers', () => {
  it('follow the manual clock: a hung call times out when the test moves time, and nothing is left waiting', async () => {
    const clock = new ManualClock(START);
    const breaker = new Breaker('payments', { timeoutMs: 500 }, { clock });
    const hung = breaker.execute(() => new Promise<never>(() => {})).catch((e: unknown) => e);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(499);
    await flush();
    expect(breaker.snapshot().totals.timeouts).toBe(0);
    clock.advance(1);
    expect(await hung).toBeInstanceOf(CallTimeoutError);
    expect(clock.pendingTimers).toBe(0);
    // A call that settles in time takes its deadline with it.
    expect(await breaker.execute(() => Promise.resolve('ok'))).toBe('ok');
    expect(clock.pendingTimers).toBe(0);
  });

  it('a clock whose setTimer is not a function is refused at construction', () => {
    expect(() => new Breaker('x', {}, { clock: { now: () => 0, setTimer: 5 as never } })).toThrow(
      'Circuit breaker "x": clock.setTimer must be a method (callback, delayMs) => cancel, or left out, got 5.',
    );
  });
});
