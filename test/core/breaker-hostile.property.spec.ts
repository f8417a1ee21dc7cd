import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Breaker,
  BreakerHookError,
  CallTimeoutError,
  isCallRejected,
  type BreakerOptions,
} from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import {
  behaviour,
  ownOutcome,
  perform,
  type Behaviour,
  type Performed,
} from '../helpers/hostile-values.js';
import { collectUnhandled } from '../helpers/unhandled.js';

/**
 * Hostile calls on every engine call path (plain and tracked execute, caller
 * signals, probes, acquire().track(), acquire() settled by hand), with
 * classifiers and listeners that throw. Invariants: every caller settles
 * exactly once with its own outcome or a documented breaker error; nothing is
 * left unhandled; no probe stays in flight; the counters add up.
 */
const SEED = 20261201;
const RUNS = 1_500;

type Path = 'execute' | 'execute-signal' | 'acquire-track' | 'acquire-by-hand';

interface Step {
  path: Path;
  behaviour: Behaviour;
  abort: boolean;
  advanceMs: number;
}

interface Setup {
  timeoutMs: number | undefined;
  consecutiveFailures: number;
  maxProbes: number;
  maxConcurrent: number;
  classify: 'default' | 'throws' | 'nonsense' | 'undefined';
  throwingListeners: (
    'success' | 'failure' | 'stateChange' | 'rejected' | 'probe' | 'timeout' | 'ignored'
  )[];
}

const setup: fc.Arbitrary<Setup> = fc.record({
  timeoutMs: fc.constantFrom(undefined, 50),
  consecutiveFailures: fc.integer({ min: 1, max: 3 }),
  maxProbes: fc.integer({ min: 1, max: 3 }),
  maxConcurrent: fc.integer({ min: 1, max: 2 }),
  classify: fc.constantFrom(
    'default' as const,
    'throws' as const,
    'nonsense' as const,
    'undefined' as const,
  ),
  throwingListeners: fc.subarray([
    'success',
    'failure',
    'stateChange',
    'rejected',
    'probe',
    'timeout',
    'ignored',
  ] as const),
});

const step: fc.Arbitrary<Step> = fc.record({
  path: fc.constantFrom<Path>('execute', 'execute-signal', 'acquire-track', 'acquire-by-hand'),
  behaviour,
  abort: fc.boolean(),
  advanceMs: fc.constantFrom(0, 0, 10, 60, 120),
});

interface Call {
  step: Step;
  ran: boolean;
  abortReason: object | undefined;
  settled: number;
  result: { value: unknown } | { error: unknown } | undefined;
  performed: Performed;
}

describe('hostile calls (property)', () => {
  const unhandled = collectUnhandled();
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('every caller settles once with its own outcome or a breaker error; no probe or permit is lost; counters add up', async () => {
    await fc.assert(
      fc.asyncProperty(setup, fc.array(step, { minLength: 1, maxLength: 12 }), async (s, steps) => {
        unhandled.length = 0;
        const clock = new ManualClock();
        const reported: unknown[] = [];
        const options: BreakerOptions = {
          consecutiveFailures: s.consecutiveFailures,
          openDurationMs: 100,
          halfOpen: {
            maxProbes: s.maxProbes,
            maxConcurrent: Math.min(s.maxConcurrent, s.maxProbes),
            maxWaitMs: 1_000,
          },
          ...(s.timeoutMs === undefined ? {} : { timeoutMs: s.timeoutMs }),
          ...(s.classify === 'throws'
            ? {
                classify: () => {
                  throw new Error('classifier bug');
                },
                classifyResult: () => {
                  throw new Error('classifier bug');
                },
              }
            : s.classify === 'nonsense'
              ? { classify: () => 'maybe' as never, classifyResult: () => 42 as never }
              : s.classify === 'undefined'
                ? { classify: () => undefined, classifyResult: () => undefined }
                : {}),
        };
        const breaker = new Breaker('hostile', options, {
          clock,
          reportError: (error) => reported.push(error),
        });
        for (const event of s.throwingListeners) {
          breaker.on(event, () => {
            throw new Error(`${event} listener bug`);
          });
        }

        const calls: Call[] = [];
        for (const st of steps) {
          // A hang only ends by a deadline or the caller's abort: without either it is the caller's own forever.
          // A permit settled by hand has no deadline of the breaker's: its caller owns the wait.
          const hangs = st.behaviour.kind === 'hang';
          if (
            hangs &&
            ((s.timeoutMs === undefined && st.path !== 'execute-signal') ||
              st.path === 'acquire-by-hand')
          )
            continue;
          const call: Call = {
            step: st,
            ran: false,
            abortReason: undefined,
            settled: 0,
            result: undefined,
            performed: {},
          };
          calls.push(call);
          const fn = () => {
            call.ran = true;
            return perform(st.behaviour, call.performed);
          };
          let promise: Promise<unknown>;
          try {
            promise = start(breaker, st.path, fn, call, hangs || st.abort);
          } catch (error) {
            promise = Promise.reject(error);
          }
          promise.then(
            (value) => {
              call.settled++;
              call.result = { value };
            },
            (error: unknown) => {
              call.settled++;
              call.result = { error };
            },
          );
          clock.advance(st.advanceMs);
          await vi.advanceTimersByTimeAsync(st.advanceMs);
        }
        // Let every deadline pass and every caller abort, then every callback run.
        for (const call of calls)
          if (call.abortReason !== undefined) controllers.get(call)?.abort(call.abortReason);
        clock.advance(1_000);
        await vi.advanceTimersByTimeAsync(1_000);
        for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));

        expect(unhandled).toEqual([]);
        for (const call of calls) {
          expect(call.settled, `${call.step.path} ${call.step.behaviour.kind}`).toBe(1);
          checkOutcome(call, s.timeoutMs !== undefined);
        }
        const snapshot = breaker.snapshot();
        expect(snapshot.halfOpen?.probesInFlight ?? 0).toBe(0);
        const t = snapshot.totals;
        expect(t.admitted).toBe(t.successes + t.failures.total + t.overloads + t.ignored);
        for (const error of reported) expect(error).toBeInstanceOf(BreakerHookError);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

const controllers = new WeakMap<Call, AbortController>();

/** Starts one call on `path`; `abortable` calls get a caller signal that the test aborts at the end. */
function start(
  breaker: Breaker,
  path: Path,
  fn: () => unknown,
  call: Call,
  abortable: boolean,
): Promise<unknown> {
  switch (path) {
    case 'execute':
      return breaker.execute(fn);
    case 'execute-signal': {
      const controller = new AbortController();
      controllers.set(call, controller);
      if (abortable) call.abortReason = { aborted: 'by the caller' };
      return breaker.execute(fn, { signal: controller.signal });
    }
    case 'acquire-track': {
      const permit = breaker.acquire();
      let result: unknown;
      try {
        result = fn();
      } catch (error) {
        permit.fail(error);
        return Promise.reject(error);
      }
      return permit.track(result);
    }
    case 'acquire-by-hand': {
      // A caller that settles its permit itself, the way the operator does.
      const permit = breaker.acquire();
      return (async () => {
        try {
          const value = await fn();
          permit.succeed(value);
          return value;
        } catch (error) {
          permit.fail(error);
          throw error;
        }
      })();
    }
  }
}

function checkOutcome(call: Call, deadline: boolean): void {
  const result = call.result!;
  const label = `${call.step.path} ${call.step.behaviour.kind}`;
  if ('error' in result && isCallRejected(result.error)) {
    // A rejection means the call was not attempted.
    expect(call.ran, label).toBe(false);
    return;
  }
  expect(call.ran, label).toBe(true);
  if ('error' in result && call.abortReason !== undefined && result.error === call.abortReason)
    return;
  if ('error' in result && isTimeout(result.error)) {
    expect(deadline || call.step.path !== 'acquire-by-hand', label).toBe(true);
    return;
  }
  const own = ownOutcome(call.step.behaviour, call.performed);
  if (own === undefined) return;
  if ('resolves' in own) {
    // Object.is, not toEqual: a hostile value may throw when compared field by field.
    expect('value' in result && Object.is(result.value, own.resolves), label).toBe(true);
  } else {
    expect(
      'error' in result && own.rejects(result.error),
      `${label}: got ${'error' in result ? String(typeof result.error) : 'a value'}`,
    ).toBe(true);
  }
}

/** `instanceof` without trusting the value: a Proxy's getPrototypeOf trap may throw. */
function isTimeout(value: unknown): boolean {
  try {
    return value instanceof CallTimeoutError;
  } catch {
    return false;
  }
}
