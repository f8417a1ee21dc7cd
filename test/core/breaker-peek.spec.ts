import { describe, expect, it } from 'vitest';
import {
  Breaker,
  BREAKER_EVENT_NAMES,
  type BreakerOptions,
  type CallPermit,
} from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A breaker one failure opens for 1 s, with every event it emits recorded. */
function breakerOn(options: BreakerOptions = {}, clock = new ManualClock()) {
  const breaker = new Breaker(
    'payments',
    { timeoutMs: false, consecutiveFailures: 1, openDurationMs: 1_000, ...options },
    { clock },
  );
  const events: string[] = [];
  for (const name of BREAKER_EVENT_NAMES) breaker.on(name, () => events.push(name));
  const open = () => breaker.acquire().fail(new Error('down'));
  return { breaker, clock, events, open };
}

/** Runs `peek()` a thousand times and returns the last answer. */
function peekMany(breaker: Breaker) {
  let last = breaker.peek();
  for (let i = 1; i < 1_000; i++) last = breaker.peek();
  return last;
}

describe('Breaker.peek() and isCallPermitted()', () => {
  it('admits on a closed breaker, and counts nothing', () => {
    const { breaker, events } = breakerOn();
    expect(peekMany(breaker)).toEqual({ permitted: true, state: 'closed', probe: false });
    expect(breaker.isCallPermitted()).toBe(true);
    expect(breaker.snapshot().totals.admitted).toBe(0);
    expect(events).toEqual([]);
  });

  it('rejects while open with the retry-after a call would get, and counts no rejection', () => {
    const { breaker, clock, events, open } = breakerOn();
    open();
    events.length = 0;
    clock.advance(400);
    expect(peekMany(breaker)).toEqual({
      permitted: false,
      state: 'open',
      reason: 'open',
      retryAfterMs: 600,
      breakerName: 'payments',
    });
    expect(breaker.isCallPermitted()).toBe(false);
    expect(breaker.snapshot().totals.rejected.total).toBe(0);
    expect(events).toEqual([]);
  });

  it('reflects a due half-open transition without making it', () => {
    const { breaker, clock, events, open } = breakerOn();
    open();
    events.length = 0;
    clock.advance(1_000);
    expect(peekMany(breaker)).toEqual({ permitted: true, state: 'half-open', probe: true });
    expect(breaker.lastDecidedState).toBe('open');
    expect(events).toEqual([]);
    // The call that comes next is the probe the answer promised.
    expect(breaker.acquire().probe).toBe(true);
  });

  it('1,000 checks at half-open leave the probe budget untouched', () => {
    const { breaker, clock, events, open } = breakerOn({
      halfOpen: { maxProbes: 3, maxConcurrent: 3, successesToClose: 3 },
    });
    open();
    clock.advance(1_000);
    expect(breaker.state).toBe('half-open');
    events.length = 0;
    const before = breaker.snapshot();
    expect(peekMany(breaker)).toEqual({ permitted: true, state: 'half-open', probe: true });
    expect(breaker.snapshot()).toEqual(before);
    expect(before.halfOpen).toEqual({
      probesAdmitted: 0,
      probesInFlight: 0,
      probesSucceeded: 0,
      probesFailed: 0,
    });
    expect(events).toEqual([]);
    // The whole budget is still there: three probes, then the fourth is turned away.
    const probes: CallPermit[] = [breaker.acquire(), breaker.acquire(), breaker.acquire()];
    expect(probes.map((p) => p.probe)).toEqual([true, true, true]);
    expect(() => breaker.acquire()).toThrow(expect.objectContaining({ reason: 'half-open-busy' }));
  });

  it('rejects as half-open-busy while the budget is taken, with the wait for the oldest probe', () => {
    const { breaker, clock, open } = breakerOn({ halfOpen: { maxWaitMs: 5_000 } });
    open();
    clock.advance(1_000);
    const probe = breaker.acquire();
    clock.advance(1_500);
    const before = breaker.snapshot();
    expect(peekMany(breaker)).toEqual({
      permitted: false,
      state: 'half-open',
      reason: 'half-open-busy',
      retryAfterMs: 3_500,
      breakerName: 'payments',
    });
    expect(breaker.snapshot()).toEqual(before);
    expect(before.totals.rejected.total).toBe(0);
    probe.succeed(undefined);
    expect(breaker.peek()).toEqual({ permitted: true, state: 'closed', probe: false });
  });

  it('reflects a probe that expired and reopened the breaker, without expiring it', () => {
    const { breaker, clock, events, open } = breakerOn({ halfOpen: { maxWaitMs: 5_000 } });
    open();
    clock.advance(1_000);
    breaker.acquire();
    events.length = 0;
    // The probe expired at +5,000 and reopened the breaker for 1 s (backoff 1: the same duration).
    clock.advance(5_400);
    expect(peekMany(breaker)).toEqual({
      permitted: false,
      state: 'open',
      reason: 'open',
      retryAfterMs: 600,
      breakerName: 'payments',
    });
    expect(breaker.lastDecidedState).toBe('half-open');
    expect(events).toEqual([]);
    clock.advance(600);
    expect(breaker.peek()).toEqual({ permitted: true, state: 'half-open', probe: true });
    expect(() => breaker.acquire()).not.toThrow();
  });

  it('answers for isolation, a force with an end, and a force that is over', () => {
    const { breaker, clock } = breakerOn();
    breaker.isolate();
    expect(breaker.peek()).toMatchObject({ permitted: false, reason: 'isolated' });
    expect(breaker.peek()).toHaveProperty('retryAfterMs', undefined);
    breaker.force('open', { reason: 'maintenance', untilMs: clock.now() + 2_000 });
    clock.advance(500);
    expect(breaker.peek()).toEqual({
      permitted: false,
      state: 'isolated',
      reason: 'isolated',
      retryAfterMs: 1_500,
      breakerName: 'payments',
    });
    clock.advance(1_500);
    expect(breaker.peek()).toEqual({ permitted: true, state: 'closed', probe: false });
    expect(breaker.lastDecidedState).toBe('isolated');
    breaker.force('disabled', { reason: 'load test' });
    expect(breaker.peek()).toEqual({ permitted: true, state: 'disabled', probe: false });
  });

  it("honours the dependency's Retry-After pause", () => {
    const { breaker, clock } = breakerOn({ consecutiveFailures: 5 });
    const overloaded = Object.assign(new Error('slow down'), {
      status: 429,
      headers: { 'retry-after': '3' },
    });
    breaker.acquire().fail(overloaded);
    clock.advance(1_000);
    expect(breaker.peek()).toEqual({
      permitted: false,
      state: 'closed',
      reason: 'retry-after',
      retryAfterMs: 2_000,
      breakerName: 'payments',
    });
    clock.advance(2_000);
    expect(breaker.isCallPermitted()).toBe(true);
  });

  it('rejects as bulkhead-full when no slot is free and the queue is full, as the call would be', async () => {
    const { breaker, events } = breakerOn({
      bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 1_000 },
    });
    const slot = breaker.acquire();
    // A call made now would wait in the queue: admitted.
    expect(breaker.peek()).toEqual({ permitted: true, state: 'closed', probe: false });
    let release!: () => void;
    const queued = breaker.execute(() => new Promise<void>((resolve) => (release = resolve)));
    events.length = 0;
    const full = {
      permitted: false,
      state: 'closed',
      reason: 'bulkhead-full',
      retryAfterMs: undefined,
      breakerName: 'payments',
    };
    expect(peekMany(breaker)).toEqual(full);
    expect(events).toEqual([]);
    // The answer foretells the call.
    await expect(breaker.execute(async () => 'x')).rejects.toMatchObject({
      reason: 'bulkhead-full',
      retryAfterMs: undefined,
    });
    // Forced disabled lets every call through, past the bulkhead too.
    breaker.force('disabled', { reason: 'load test' });
    expect(breaker.peek()).toEqual({ permitted: true, state: 'disabled', probe: false });
    breaker.release();
    slot.succeed(undefined);
    // The slot is handed over, then the queued call's admission resumes: one microtask each.
    await Promise.resolve();
    await Promise.resolve();
    release();
    await queued;
    expect(breaker.peek()).toEqual({ permitted: true, state: 'closed', probe: false });
  });

  it("a per-key child answers with its family's rejection while the family is open", () => {
    const clock = new ManualClock();
    const family = new Breaker(
      'hosts',
      {
        timeoutMs: false,
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        perKey: { maxKeys: 10 },
        aggregate: { openWhenOpenRatio: 1, minKeys: 1 },
      },
      { clock },
    );
    expect(family.peek()).toEqual({ permitted: true, state: 'closed', probe: false });
    family.forKey('a').acquire().fail(new Error('down'));
    expect(family.lastDecidedState).toBe('open');
    const rejection = {
      permitted: false,
      state: 'open',
      reason: 'open',
      retryAfterMs: 1_000,
      breakerName: 'hosts',
    };
    expect(family.forKey('b').peek()).toEqual(rejection);
    expect(family.peek()).toEqual(rejection);
    clock.advance(1_000);
    // The family's probe goes through whichever key is asked for; key "a" is still open itself.
    expect(family.forKey('b').peek()).toEqual({ permitted: true, state: 'closed', probe: true });
    expect(family.forKey('a').peek()).toEqual({ permitted: true, state: 'half-open', probe: true });
    expect(family.lastDecidedState).toBe('open');
    expect(family.snapshot().halfOpen?.probesAdmitted).toBe(0);
    // A child forced disabled lets its call through unrecorded: no probe of the family's, which keeps its permit.
    const loadTest = family.forKey('c');
    loadTest.force('disabled', { reason: 'load test' });
    expect(loadTest.peek()).toEqual({ permitted: true, state: 'disabled', probe: false });
    expect(loadTest.acquire().probe).toBe(false);
    expect(family.snapshot().halfOpen).toMatchObject({ probesAdmitted: 0, probesInFlight: 0 });
  });
});

describe('Breaker.peekKey()', () => {
  it('answers for the overflow child a key of the full family would reach, as forKey(key).peek() does', () => {
    const { breaker: family } = breakerOn({ perKey: { maxKeys: 1 } });
    family.forKey('a').acquire().fail(new Error('down'));
    // "a" is open and holds the only slot: "b" shares the overflow child, which one failure opens.
    family.forKey('b').acquire().fail(new Error('down'));
    const refused = {
      permitted: false,
      state: 'open',
      reason: 'open',
      retryAfterMs: 1_000,
      breakerName: 'payments[…overflow]',
    };
    expect(family.forKey('b').peek()).toEqual(refused);
    expect(family.peekKey('b')).toEqual(refused);
    expect(family.peekKey('c')).toEqual(refused);
    expect(family.snapshot().family).toMatchObject({ keys: 2, overflowed: 2 });
  });

  it('answers for a new child while a held child could still be evicted', () => {
    const { breaker: family } = breakerOn({ perKey: { maxKeys: 1 } });
    family.forKey('a').acquire().fail(new Error('down'));
    family.forKey('b').acquire().fail(new Error('down'));
    family.forKey('a').reset();
    // "a" is closed again: a call on "c" would evict it and get a closed child of its own.
    expect(family.peekKey('c')).toEqual({ permitted: true, state: 'closed', probe: false });
    expect(family.forKey('c').peek()).toEqual({ permitted: true, state: 'closed', probe: false });
    expect(family.peekKey('b')).toMatchObject({ permitted: true, state: 'closed' });
  });
});
