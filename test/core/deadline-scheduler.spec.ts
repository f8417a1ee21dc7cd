import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DeadlineScheduler,
  type Deadline,
  type TimerSource,
} from '../../lib/core/calls/deadline-scheduler.js';

/** Makes calls come densely: a burst within one millisecond, each settled at once. */
function burst(scheduler: DeadlineScheduler, timeoutMs: number): void {
  for (let i = 0; i < 32; i++) {
    const d = deadline(`burst-${i}`, []);
    scheduler.add(d, timeoutMs);
    scheduler.remove(d);
  }
}

function deadline(name: string, expired: string[]): Deadline {
  return {
    dueAt: 0,
    prev: undefined,
    next: undefined,
    queue: undefined,
    expire: () => expired.push(name),
  };
}

describe('DeadlineScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps no queue for a length nobody waits with any more, except the one used last', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    // Per-call deadlines of ever new lengths, settled before they are due (removed), or expired.
    for (let i = 0; i < 1_000; i++) {
      const d = deadline(`r${i}`, expired);
      scheduler.add(d, 1_000 + i);
      scheduler.remove(d);
    }
    expect([scheduler.size, scheduler.queueCount]).toEqual([0, 1]);
    for (let i = 0; i < 100; i++) scheduler.add(deadline(`e${i}`, expired), 10 + i);
    vi.advanceTimersByTime(200);
    expect([expired.length, scheduler.size, scheduler.queueCount]).toEqual([100, 0, 1]);
  });

  it('expires each deadline at its time, across timeouts, with one timer', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    scheduler.add(deadline('a@100', expired), 100);
    vi.advanceTimersByTime(10);
    scheduler.add(deadline('b@60', expired), 50);
    scheduler.add(deadline('c@110', expired), 100);
    // The deadline timer alone: calls this sparse read the clock as they come, and need no stamp.
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(49);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['b@60']);
    vi.advanceTimersByTime(39);
    expect(expired).toEqual(['b@60']);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['b@60', 'a@100']);
    vi.advanceTimersByTime(10);
    expect(expired).toEqual(['b@60', 'a@100', 'c@110']);
    // Nothing waits: no timer is armed again.
    expect(scheduler.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a removed deadline never expires; the timer is left to fire once with nothing to do, then goes', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    const first = deadline('first', expired);
    const middle = deadline('middle', expired);
    const last = deadline('last', expired);
    scheduler.add(first, 100);
    scheduler.add(middle, 100);
    scheduler.add(last, 100);
    scheduler.remove(middle);
    scheduler.remove(first);
    vi.advanceTimersByTime(100);
    expect(expired).toEqual(['last']);
    scheduler.add(first, 100);
    scheduler.remove(first);
    // Removing twice is harmless.
    scheduler.remove(first);
    expect(scheduler.size).toBe(0);
    // Calls made one after another do not pay for a timer each: the one armed stays until it fires, idle.
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(expired).toEqual(['last']);
  });

  it('an expiry that adds a deadline is scheduled too', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    const chained: Deadline = {
      ...deadline('x', expired),
      expire: () => {
        expired.push('first');
        scheduler.add(deadline('second', expired), 30);
      },
    };
    scheduler.add(chained, 20);
    vi.advanceTimersByTime(20);
    expect(expired).toEqual(['first']);
    vi.advanceTimersByTime(30);
    expect(expired).toEqual(['first', 'second']);
  });

  it('calls that come densely share one stamp: a clock reading a millisecond, whatever their number', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    const now = vi.spyOn(performance, 'now');
    for (let i = 0; i < 1_000; i++) {
      const d = deadline(`call-${i}`, expired);
      scheduler.add(d, 10_000);
      scheduler.remove(d);
      if (i % 100 === 99) vi.advanceTimersByTime(1);
    }
    // The first 32 read the clock (a burst); then one stamp for each millisecond's calls.
    expect(now).toHaveBeenCalledTimes(32 + 10);
    // The deadline timer the first call armed: it fires once with nothing to do, and goes.
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(expired).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('sparse calls read the clock each and arm no stamp; a quiet millisecond makes dense calls sparse again', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    const now = vi.spyOn(performance, 'now');
    for (let i = 0; i < 10; i++) {
      const d = deadline(`sparse-${i}`, expired);
      scheduler.add(d, 10_000);
      scheduler.remove(d);
      // Only the deadline timer, never a stamp timer.
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(1);
    }
    expect(now).toHaveBeenCalledTimes(10);
    burst(scheduler, 10_000);
    // Dense now: the next call waits for a stamp, which finds one call since it was armed.
    scheduler.add(deadline('stamped', expired), 10_000);
    expect(vi.getTimerCount()).toBe(2);
    vi.advanceTimersByTime(1);
    now.mockClear();
    scheduler.add(deadline('sparse-again', expired), 10_000);
    expect([now.mock.calls.length, vi.getTimerCount()]).toEqual([1, 1]);
    vi.advanceTimersByTime(10_000);
    expect(expired).toEqual(['stamped', 'sparse-again']);
  });

  it('re-arms a timer that is overdue, as one armed under another time base would be', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    scheduler.add(deadline('before', expired), 50);
    vi.advanceTimersByTime(0);
    // Fake timers replaced: the timer armed before never fires in this time base.
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'], now: 0 });
    vi.advanceTimersByTime(100);
    scheduler.add(deadline('after', expired), 20);
    vi.advanceTimersByTime(20);
    expect(expired).toEqual(['before', 'after']);
  });

  it('a call whose stamp timer was armed under other timers still gets its due time', () => {
    const scheduler = new DeadlineScheduler();
    const expired: string[] = [];
    scheduler.add(deadline('before', expired), 50);
    // Replaced before the stamp timer fired: it never will in this time base.
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'], now: 0 });
    scheduler.add(deadline('after', expired), 20);
    vi.advanceTimersByTime(20);
    expect(expired).toEqual(['after']);
    vi.advanceTimersByTime(30);
    expect(expired).toEqual(['after', 'before']);
    expect(scheduler.size).toBe(0);
  });

  it('a sparse call is due at exactly its start plus its timeout', () => {
    const scheduler = new DeadlineScheduler();
    const at: number[] = [];
    const call: Deadline = { ...deadline('call', []), expire: () => at.push(performance.now()) };
    setTimeout(() => scheduler.add(call, 100), 10);
    vi.advanceTimersByTime(109);
    expect(at).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(at).toEqual([110]);
  });

  it("a dense call's due time comes from the stamp: never before the start plus the timeout, later by what the stamp timer waited", () => {
    const scheduler = new DeadlineScheduler();
    burst(scheduler, 1_000);
    const expired: string[] = [];
    const at: number[] = [];
    const late: Deadline = {
      ...deadline('late', expired),
      expire: () => at.push(performance.now()),
    };
    // Added in another timer's callback: a zero-delay timer armed there fires a millisecond later (as in Node).
    setTimeout(() => scheduler.add(late, 100), 10);
    vi.advanceTimersByTime(10);
    expect(scheduler.size).toBe(1);
    vi.advanceTimersByTime(100);
    expect(at).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(at).toEqual([111]);
  });
});

/** A clock with timers of its own, fired in order of due time as the test moves it (a manual clock, as a TimerSource). */
class TimerClock implements TimerSource {
  time = 0;
  private timers: { at: number; seq: number; callback: () => void; live: boolean }[] = [];
  private seq = 0;

  monotonic(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): () => void {
    const timer = { at: this.time + delayMs, seq: this.seq++, callback, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  }

  get pending(): number {
    return this.timers.filter((t) => t.live).length;
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.reduce<(typeof this.timers)[number] | undefined>(
        (first, t) =>
          t.live && t.at <= end && (first === undefined || t.at < first.at) ? t : first,
        undefined,
      );
      if (due === undefined) break;
      due.live = false;
      this.time = Math.max(this.time, due.at);
      due.callback();
    }
    this.timers = this.timers.filter((t) => t.live);
    this.time = end;
  }
}

describe('DeadlineScheduler on a clock with timers', () => {
  it('expires in order of due time, each at exactly its start plus its timeout, and cancels its timer when nothing waits', () => {
    const clock = new TimerClock();
    const scheduler = new DeadlineScheduler(clock);
    const log: string[] = [];
    const add = (name: string, timeoutMs: number): Deadline => {
      const d: Deadline = {
        ...deadline(name, []),
        expire: () => log.push(`${name}@${clock.time}`),
      };
      scheduler.add(d, timeoutMs);
      return d;
    };
    add('a', 30);
    add('b', 10);
    clock.advance(5);
    add('c', 30);
    const d = add('d', 20);
    add('e', 10);
    expect(clock.pending).toBe(1);
    clock.advance(4);
    expect(log).toEqual([]);
    scheduler.remove(d);
    clock.advance(40);
    expect(log).toEqual(['b@10', 'e@15', 'a@30', 'c@35']);
    expect(scheduler.size).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('a call added while others expire is timed from that moment', () => {
    const clock = new TimerClock();
    const scheduler = new DeadlineScheduler(clock);
    const log: string[] = [];
    const chained: Deadline = {
      ...deadline('first', []),
      expire: () => {
        log.push(`first@${clock.time}`);
        scheduler.add(
          { ...deadline('second', []), expire: () => log.push(`second@${clock.time}`) },
          7,
        );
      },
    };
    scheduler.add(chained, 3);
    clock.advance(100);
    expect(log).toEqual(['first@3', 'second@10']);
  });
});

type Step =
  | { kind: 'add'; timeoutMs: number; chainMs: number | undefined }
  | { kind: 'remove'; pick: number }
  | { kind: 'advance'; ms: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('add' as const),
    timeoutMs: fc.constantFrom(5, 10, 25),
    chainMs: fc.option(fc.constantFrom(3, 10), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }),
);

interface Tracked {
  id: number;
  timeoutMs: number;
  addedAt: number;
  removedAt: number | undefined;
  expiredAt: number[];
}

/**
 * Runs `steps` on `scheduler` and checks it against the plain meaning of a
 * deadline: each call not removed in time expires exactly once, at exactly its
 * start plus its timeout (a call added by an expiry too), calls of one timeout
 * in the order they came, and a removed call never.
 */
function runModel(
  steps: Step[],
  scheduler: DeadlineScheduler,
  now: () => number,
  advance: (ms: number) => void,
): void {
  const all: Tracked[] = [];
  const order = new Map<number, number[]>();
  const live = new Map<number, Deadline>();
  const start = (timeoutMs: number, chainMs: number | undefined): Tracked => {
    const t: Tracked = {
      id: all.length,
      timeoutMs,
      addedAt: now(),
      removedAt: undefined,
      expiredAt: [],
    };
    all.push(t);
    const d: Deadline = {
      ...deadline(String(t.id), []),
      expire: () => {
        t.expiredAt.push(now());
        order.set(timeoutMs, [...(order.get(timeoutMs) ?? []), t.id]);
        if (chainMs !== undefined) start(chainMs, undefined);
      },
    };
    live.set(t.id, d);
    scheduler.add(d, timeoutMs);
    return t;
  };
  for (const step of steps) {
    if (step.kind === 'add') start(step.timeoutMs, step.chainMs);
    else if (step.kind === 'advance') advance(step.ms);
    else {
      const waiting = all.filter((t) => t.removedAt === undefined && t.expiredAt.length === 0);
      if (waiting.length === 0) continue;
      const t = waiting[step.pick % waiting.length];
      t.removedAt = now();
      scheduler.remove(live.get(t.id)!);
    }
  }
  advance(100);
  expect(scheduler.size).toBe(0);
  for (const t of all) {
    if (t.removedAt !== undefined) expect(t.expiredAt).toEqual([]);
    else expect(t.expiredAt).toEqual([t.addedAt + t.timeoutMs]);
  }
  // One timeout, first come first expired.
  for (const ids of order.values())
    expect(ids.filter((id, i) => i > 0 && id < ids[i - 1]!)).toEqual([]);
}

describe('DeadlineScheduler (property)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('on the process timers: every call expires once at its start plus its timeout, unless removed first', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 60 }), (steps) => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'], now: 0 });
        try {
          runModel(
            steps,
            new DeadlineScheduler(),
            () => performance.now(),
            (ms) => vi.advanceTimersByTime(ms),
          );
          // Nothing waits: at most the idle deadline timer is left, and it goes when it fires.
          vi.advanceTimersByTime(100);
          expect(vi.getTimerCount()).toBe(0);
        } finally {
          vi.useRealTimers();
        }
      }),
      { seed: 26_0026, numRuns: 300 },
    );
  });

  it('on a clock with timers: the same, and no timer left once nothing waits', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 60 }), (steps) => {
        const clock = new TimerClock();
        runModel(
          steps,
          new DeadlineScheduler(clock),
          () => clock.time,
          (ms) => clock.advance(ms),
        );
        expect(clock.pending).toBe(0);
      }),
      { seed: 26_0027, numRuns: 300 },
    );
  });
});

describe('DeadlineScheduler when the event loop is late', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a sparse call added while the deadline timer is overdue does not hold back the calls already due', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'], now: 0 });
    const scheduler = new DeadlineScheduler();
    const at: number[] = [];
    scheduler.add({ ...deadline('due', []), expire: () => at.push(performance.now()) }, 50);
    // A busy event loop: the clock reads 100 before the timer armed for 50 has run.
    vi.spyOn(performance, 'now').mockReturnValueOnce(100);
    scheduler.add(deadline('later', []), 1_000);
    vi.advanceTimersByTime(60);
    expect(at).toEqual([50]);
  });

  type Step =
    | { kind: 'burst'; n: number; timeoutMs: number; removeMask: number; chainMs?: number }
    | { kind: 'remove'; pick: number }
    | { kind: 'advance'; ms: number }
    | { kind: 'inTimer'; delay: number; n: number; timeoutMs: number };
  const steps: fc.Arbitrary<Step> = fc.oneof(
    fc.record({
      kind: fc.constant('burst' as const),
      // A few calls (sparse), or a burst that makes them dense.
      n: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 28, max: 70 })),
      timeoutMs: fc.constantFrom(0, 1, 5, 10, 25),
      removeMask: fc.nat(),
      chainMs: fc.option(fc.constantFrom(0, 3, 10), { nil: undefined }),
    }),
    fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
    fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 30 })),
    }),
    fc.record({
      kind: fc.constant('inTimer' as const),
      delay: fc.integer({ min: 0, max: 3 }),
      n: fc.oneof(fc.constant(1), fc.integer({ min: 30, max: 40 })),
      timeoutMs: fc.constantFrom(1, 5, 10),
    }),
  );
  interface Call {
    timeoutMs: number;
    addedAt: number;
    removed: boolean;
    expiredAt: number[];
    deadline?: Deadline;
  }

  it('every call not removed expires once, at its start plus its timeout and at most 2 ms later, in order (property)', () => {
    fc.assert(
      fc.property(fc.array(steps, { maxLength: 40 }), (plan) => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'], now: 0 });
        const scheduler = new DeadlineScheduler();
        const calls: Call[] = [];
        const expiredInOrder = new Map<number, Call[]>();
        const start = (timeoutMs: number, chainMs?: number): Call => {
          const call: Call = {
            timeoutMs,
            addedAt: performance.now(),
            removed: false,
            expiredAt: [],
          };
          calls.push(call);
          call.deadline = {
            ...deadline('call', []),
            expire: () => {
              call.expiredAt.push(performance.now());
              expiredInOrder.set(timeoutMs, [...(expiredInOrder.get(timeoutMs) ?? []), call]);
              // An expiry that starts another call (a retry).
              if (chainMs !== undefined) start(chainMs);
            },
          };
          scheduler.add(call.deadline, timeoutMs);
          return call;
        };
        const remove = (call: Call): void => {
          if (call.removed || call.expiredAt.length > 0) return;
          call.removed = true;
          scheduler.remove(call.deadline!);
        };
        for (const step of plan) {
          if (step.kind === 'burst')
            for (let i = 0; i < step.n; i++) {
              const call = start(step.timeoutMs, step.chainMs);
              if ((step.removeMask >> (i % 30)) & 1) remove(call);
            }
          else if (step.kind === 'advance') vi.advanceTimersByTime(step.ms);
          else if (step.kind === 'inTimer')
            setTimeout(() => {
              for (let i = 0; i < step.n; i++) start(step.timeoutMs);
            }, step.delay);
          else {
            const waiting = calls.filter((c) => !c.removed && c.expiredAt.length === 0);
            if (waiting.length > 0) remove(waiting[step.pick % waiting.length]!);
          }
        }
        vi.advanceTimersByTime(200);
        expect(scheduler.size).toBe(0);
        for (const call of calls) {
          if (call.removed) expect(call.expiredAt).toEqual([]);
          else {
            expect(call.expiredAt).toHaveLength(1);
            const due = call.addedAt + call.timeoutMs;
            expect(call.expiredAt[0]).toBeGreaterThanOrEqual(due);
            expect(call.expiredAt[0]).toBeLessThanOrEqual(due + 2);
          }
        }
        for (const expired of expiredInOrder.values())
          for (let i = 1; i < expired.length; i++)
            expect(expired[i]!.addedAt).toBeGreaterThanOrEqual(expired[i - 1]!.addedAt);
        vi.advanceTimersByTime(200);
        expect(vi.getTimerCount()).toBe(0);
        vi.useRealTimers();
      }),
      { numRuns: 400, seed: 42 },
    );
  });
});
