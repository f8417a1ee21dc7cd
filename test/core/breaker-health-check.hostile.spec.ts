/* oxlint-disable unicorn/no-thenable -- hostile thenables are what this file returns from a health check */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  HealthCheckScheduler,
  type HealthCheckEvent,
  type SchedulerTimers,
} from '../../lib/core/index.js';
import type { ScheduledTask } from '../../lib/core/recovery/health-check-scheduler.js';
import { flush } from '../helpers/flush.js';
import {
  build,
  hostileResolved,
  hostileThrown,
  type ValueSpec,
} from '../helpers/hostile-values.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { collectUnhandled } from '../helpers/unhandled.js';

const SEED = 25_0003;

/** The scheduler's one timer, fired by the test when the clock reaches it. */
class OneTimer implements SchedulerTimers {
  private pending: { callback: () => void; at: number } | undefined;
  constructor(private readonly clock: ManualClock) {}

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { callback, at: this.clock.now() + ms };
    this.pending = timer;
    return timer;
  }

  clearTimeout(handle: unknown): void {
    if (this.pending === handle) this.pending = undefined;
  }

  /** Moves the clock to `until`, firing the timer at each due time on the way, as Node would. */
  async runUntil(until: number): Promise<void> {
    while (this.pending !== undefined && this.pending.at <= until) {
      const { callback, at } = this.pending;
      this.pending = undefined;
      this.clock.set(Math.max(at, this.clock.now()));
      callback();
      await flush();
    }
    this.clock.set(until);
  }
}

/** A native promise whose `constructor` getter throws: `Promise.resolve()` reads it synchronously. */
function constructorThrows(settle: 'resolve' | 'reject'): Promise<unknown> {
  const promise = settle === 'resolve' ? Promise.resolve('ok') : Promise.reject(new Error('down'));
  promise.catch(() => undefined);
  Object.defineProperty(promise, 'constructor', {
    get() {
      throw new TypeError('constructor getter exploded');
    },
  });
  return promise;
}

type Hostile =
  | { kind: 'constructor-throws'; settle: 'resolve' | 'reject' }
  | { kind: 'then-getter-throws' }
  | { kind: 'thenable-throws' }
  | { kind: 'thenable-twice'; first: 'resolve' | 'reject' }
  | { kind: 'thenable-never' }
  | { kind: 'never' }
  | { kind: 'returns'; value: ValueSpec }
  | { kind: 'rejects'; error: ValueSpec }
  | { kind: 'throws'; error: ValueSpec };

const hostile: fc.Arbitrary<Hostile> = fc.oneof(
  fc
    .constantFrom('resolve' as const, 'reject' as const)
    .map((settle): Hostile => ({ kind: 'constructor-throws', settle })),
  fc.constantFrom<Hostile>(
    { kind: 'then-getter-throws' },
    { kind: 'thenable-throws' },
    { kind: 'thenable-never' },
    { kind: 'never' },
  ),
  fc
    .constantFrom('resolve' as const, 'reject' as const)
    .map((first): Hostile => ({ kind: 'thenable-twice', first })),
  hostileResolved.map((value): Hostile => ({ kind: 'returns', value })),
  hostileThrown.map((error): Hostile => ({ kind: 'rejects', error })),
  hostileThrown.map((error): Hostile => ({ kind: 'throws', error })),
);

function perform(h: Hostile): unknown {
  switch (h.kind) {
    case 'constructor-throws':
      return constructorThrows(h.settle);
    case 'then-getter-throws':
      return Object.defineProperty(Promise.resolve('ok'), 'then', {
        get() {
          throw new TypeError('then getter exploded');
        },
      });
    case 'thenable-throws':
      return {
        then() {
          throw new Error('then exploded');
        },
      };
    case 'thenable-twice':
      return {
        then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
          if (h.first === 'resolve') {
            resolve({ status: 503 });
            reject(new Error('second'));
          } else {
            reject(new Error('first'));
            resolve('second');
          }
        },
      };
    case 'thenable-never':
      return { then: () => undefined };
    case 'never':
      return new Promise(() => undefined);
    case 'returns':
      return build(h.value);
    case 'rejects':
      return Promise.reject(build(h.error));
    case 'throws':
      throw build(h.error);
  }
}

const INTERVAL_MS = 1_000;
const TIMEOUT_MS = 300;

/** Two open breakers on one scheduler, due in the same ticks: `hostile` checks through `fn`, `steady` through a plain failing check. */
async function twoBreakers(fn: () => unknown) {
  const clock = new ManualClock(0);
  const timers = new OneTimer(clock);
  const scheduler = new HealthCheckScheduler({ clock, timers });
  const reported: Error[] = [];
  const deps = {
    clock,
    healthCheckScheduler: scheduler,
    reportError: (e: Error) => reported.push(e),
  };
  const base = { consecutiveFailures: 1, openDurationMs: 600_000, timeoutMs: false as const };
  let steadyChecks = 0;
  const hostileBreaker = new Breaker(
    'hostile',
    { ...base, healthCheck: { fn, intervalMs: INTERVAL_MS, timeoutMs: TIMEOUT_MS } },
    deps,
  );
  const steady = new Breaker(
    'steady',
    {
      ...base,
      healthCheck: {
        fn: () => {
          steadyChecks++;
          return Promise.reject(new Error('still down'));
        },
        intervalMs: INTERVAL_MS,
      },
    },
    deps,
  );
  const events: HealthCheckEvent[] = [];
  hostileBreaker.on('healthCheck', (event) => events.push(event));
  for (const breaker of [hostileBreaker, steady])
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
  return { timers, hostileBreaker, steady, events, reported, steadyChecks: () => steadyChecks };
}

describe('Health check: nothing a health check function returns stops the scheduler', () => {
  const unhandled = collectUnhandled();

  it('a native promise whose constructor getter throws is a failed check; both breakers go on probing', async () => {
    let checks = 0;
    const run = await twoBreakers(() => {
      checks++;
      return constructorThrows('resolve');
    });
    await run.timers.runUntil(5 * INTERVAL_MS);
    expect(checks).toBe(5);
    expect(run.steadyChecks()).toBe(5);
    expect(run.events.map((event) => event.result)).toEqual(Array(5).fill('failed'));
    expect((run.events[0]!.error as Error).message).toBe('constructor getter exploded');
    expect(run.hostileBreaker.state).toBe('open');
    expect(run.hostileBreaker.snapshot().healthCheck).toEqual({ nextAt: 6_000, inFlight: false });
    expect(run.reported).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('a health check that never settles is failed at its deadline, every interval', async () => {
    const run = await twoBreakers(() => ({ then: () => undefined }));
    await run.timers.runUntil(2 * INTERVAL_MS + TIMEOUT_MS);
    expect(run.events.map((event) => [event.result, event.durationMs])).toEqual([
      ['failed', TIMEOUT_MS],
      ['failed', TIMEOUT_MS],
    ]);
    expect(run.events[1]!.error).toBeInstanceOf(CallTimeoutError);
    expect(run.steadyChecks()).toBe(2);
  });

  it('property: every check ends in exactly one outcome, and the other breaker runs all of its checks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(hostile, { minLength: 8, maxLength: 8 }), async (returns) => {
        let checks = 0;
        const run = await twoBreakers(() => perform(returns[checks++]!));
        await run.timers.runUntil(8 * INTERVAL_MS + TIMEOUT_MS);
        expect(run.steadyChecks()).toBe(8);
        expect(run.steady.state).toBe('open');
        // A check that succeeded moves the breaker to half-open, and its health check stops there.
        const success = run.events.findIndex((event) => event.result === 'succeeded');
        expect(checks).toBe(success === -1 ? 8 : success + 1);
        expect(run.events).toHaveLength(checks);
        expect(run.hostileBreaker.state).toBe(success === -1 ? 'open' : 'half-open');
        expect(unhandled).toEqual([]);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('a task whose turn throws is told so and keeps its place; the task due beside it still runs', async () => {
    const clock = new ManualClock(0);
    const timers = new OneTimer(clock);
    const scheduler = new HealthCheckScheduler({ clock, timers });
    const log: string[] = [];
    const task = (name: string, fault: Error | undefined): ScheduledTask => ({
      at: 0,
      index: -1,
      run(now) {
        log.push(`${name} ran at ${now}`);
        if (fault !== undefined) throw fault;
        scheduler.schedule(this, now + 1_000);
      },
      failed(error, now) {
        log.push(`${name} failed at ${now}: ${(error as Error).message}`);
        scheduler.schedule(this, now + 1_000);
      },
    });
    scheduler.schedule(task('throws', new Error('turn exploded')), 1_000);
    scheduler.schedule(task('steady', undefined), 1_000);
    await timers.runUntil(2_000);
    expect(log).toEqual([
      'throws ran at 1000',
      'throws failed at 1000: turn exploded',
      'steady ran at 1000',
      'throws ran at 2000',
      'throws failed at 2000: turn exploded',
      'steady ran at 2000',
    ]);
    expect(scheduler.size).toBe(2);
    expect(scheduler.armed).toBe(true);
  });

  it("a breaker whose health check turn throws (here its coordinator's mayProbe) reports it once and keeps checking", async () => {
    const clock = new ManualClock(0);
    const timers = new OneTimer(clock);
    const reported: Error[] = [];
    let asked = 0;
    const breaker = new Breaker(
      'fleet',
      {
        consecutiveFailures: 1,
        openDurationMs: 600_000,
        timeoutMs: false,
        healthCheck: { fn: () => 'healthy', intervalMs: INTERVAL_MS },
      },
      {
        clock,
        healthCheckScheduler: new HealthCheckScheduler({ clock, timers }),
        reportError: (error) => reported.push(error),
        coordinator: {
          transitioned: () => undefined,
          mayProbe: () => {
            asked++;
            throw new Error('store exploded');
          },
        },
      },
    );
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    await timers.runUntil(3 * INTERVAL_MS);
    expect(asked).toBe(3);
    expect(reported.map((error) => error.message)).toEqual([
      `Circuit breaker "fleet": the health check's turn threw Error: store exploded. Its health checks go on every healthCheck.intervalMs; if healthCheck.fn is the cause, make it return a plain promise or value. Later faults of this health check are not reported again.`,
    ]);
    expect(breaker.snapshot().healthCheck).toEqual({ nextAt: 4_000, inFlight: false });
  });
});
