import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CallRejectedError,
  isCallRejected,
  type StateChangeEvent,
} from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('Breaker manual control', () => {
  it('isolate() rejects everything with reason isolated and no retry estimate, until reset()', async () => {
    const breaker = new Breaker('manual');
    breaker.isolate();
    const error = (await breaker.execute(() => 1).catch((e: unknown) => e)) as CallRejectedError;
    expect(error).toBeInstanceOf(CallRejectedError);
    expect(error).toMatchObject({
      reason: 'isolated',
      state: 'isolated',
      retryAfterMs: undefined,
      code: 'CIRCUIT_OPEN',
      breakerName: 'manual',
    });
    expect(error.message).toBe(
      'Circuit breaker "manual" rejected the call: the circuit was isolated by hand.',
    );
    breaker.reset();
    await expect(breaker.execute(() => 2)).resolves.toBe(2);
  });

  it('reset() closes an open breaker with an empty window and no backoff', async () => {
    const clock = new ManualClock();
    const breaker = new Breaker(
      'reset',
      { consecutiveFailures: 2, openDurationMs: 100, backoff: { multiplier: 10 } },
      { clock },
    );
    await breaker.execute(() => Promise.reject(new Error('a'))).catch(() => undefined);
    await breaker.execute(() => Promise.reject(new Error('b'))).catch(() => undefined);
    clock.advance(100);
    await breaker.execute(() => Promise.reject(new Error('c'))).catch(() => undefined);
    expect(breaker.snapshot().thresholds.nextOpenDurationMs).toBe(10_000);
    breaker.reset();
    expect(breaker.snapshot()).toMatchObject({
      state: 'closed',
      window: { calls: 0 },
      thresholds: { nextOpenDurationMs: 100 },
    });
    await breaker.execute(() => Promise.reject(new Error('d'))).catch(() => undefined);
    expect(breaker.state).toBe('closed'); // the streak restarted at zero
  });

  it('emits every transition with its reason and time', async () => {
    const clock = new ManualClock(5_000);
    const breaker = new Breaker(
      'events',
      { consecutiveFailures: 1, openDurationMs: 100 },
      { clock },
    );
    const changes: StateChangeEvent[] = [];
    breaker.on('stateChange', (e) => changes.push(e));
    await breaker.execute(() => Promise.reject(new Error('x'))).catch(() => undefined);
    clock.advance(100);
    await breaker.execute(() => 'ok');
    breaker.isolate();
    breaker.disable();
    breaker.reset();
    expect(changes).toEqual([
      {
        from: 'closed',
        to: 'open',
        reason: 'consecutive-failures',
        at: 5_000,
        openUntil: 5_100,
        consecutiveFailures: 1,
      },
      { from: 'open', to: 'half-open', reason: 'open-duration-elapsed', at: 5_100 },
      { from: 'half-open', to: 'closed', reason: 'probes-succeeded', at: 5_100 },
      // isolate() and disable() are force('open') and force('disabled'), reason `forced`.
      {
        from: 'closed',
        to: 'isolated',
        reason: 'forced',
        at: 5_100,
        forced: { state: 'open', reason: 'isolate()' },
      },
      {
        from: 'isolated',
        to: 'disabled',
        reason: 'forced',
        at: 5_100,
        forced: { state: 'disabled', reason: 'disable()' },
      },
      { from: 'disabled', to: 'closed', reason: 'reset', at: 5_100 },
    ]);
  });

  it('isCallRejected recognises rejections, also from another copy of the package, and nothing else', () => {
    expect(isCallRejected(new CallRejectedError('a', 'open', 'open', 1))).toBe(true);
    const foreign = Object.create(
      Object.getPrototypeOf(new CallRejectedError('b', 'open', 'open', 1)),
    );
    expect(isCallRejected(foreign)).toBe(true);
    expect(isCallRejected({ [Symbol.for('nestjs-circuit-breaker.rejection')]: true })).toBe(true);
    expect(isCallRejected(new Error('x'))).toBe(false);
    expect(isCallRejected(undefined)).toBe(false);
  });

  it('a rejection is cheap: it carries no stack frames, but a stack line that names it', () => {
    const error = new CallRejectedError('cheap', 'open', 'open', 10);
    expect(error.stack).toBe(
      'CallRejectedError: Circuit breaker "cheap" rejected the call: the circuit is open.',
    );
    expect(Error.stackTraceLimit).toBeGreaterThan(0);
  });

  it("the breaker's own rejections skip the Error constructor but read like errors", async () => {
    const breaker = new Breaker('lazy', { consecutiveFailures: 1 });
    const cause = new Error('down');
    await breaker.execute(() => Promise.reject(cause)).catch(() => undefined);
    const rejection = (await breaker
      .execute(() => 1)
      .catch((e: unknown) => e)) as CallRejectedError;
    expect(rejection).toBeInstanceOf(CallRejectedError);
    expect(rejection).toBeInstanceOf(Error);
    expect(rejection.name).toBe('CallRejectedError');
    expect(rejection.message).toBe(
      'Circuit breaker "lazy" rejected the call: the circuit is open.',
    );
    expect(String(rejection)).toBe(
      'CallRejectedError: Circuit breaker "lazy" rejected the call: the circuit is open.',
    );
    expect(rejection.stack).toBe(
      'CallRejectedError: Circuit breaker "lazy" rejected the call: the circuit is open.\n    at <rejected by circuit breaker "lazy": the call was not attempted>',
    );
    expect(rejection.cause).toBe(cause);
    expect(rejection).toMatchObject({
      code: 'CIRCUIT_OPEN',
      breakerName: 'lazy',
      state: 'open',
      reason: 'open',
    });
    expect(isCallRejected(rejection)).toBe(true);
    expect(inspect(rejection)).toContain('Circuit breaker "lazy" rejected the call');
  });

  it('execute() with something that is not a function throws a TypeError at once', () => {
    const breaker = new Breaker('typed');
    expect(() => breaker.execute('nope' as never)).toThrow(
      new TypeError(
        'Circuit breaker "typed": execute() takes the function to protect, got "nope". Pass a function, e.g. execute(({ signal }) => fetch(url, { signal })).',
      ),
    );
  });

  it('runs synchronous functions and turns a synchronous throw into a rejection', async () => {
    const breaker = new Breaker('sync', { consecutiveFailures: 1 });
    await expect(breaker.execute(() => 41 + 1)).resolves.toBe(42);
    await expect(
      breaker.execute(() => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(breaker.state).toBe('open');
  });
});
