/**
 * The bulkhead's slot accounting under random sequences of calls, settlements,
 * aborts, queue timeouts and reconfigurations (fixed seed): after every step,
 * the calls running are exactly the calls holding a slot and never more than
 * the cap, the queue never exceeds its bound, slots go to waiters oldest
 * first, no refusal is ever counted as a failure, and at the end every
 * caller's promise has settled.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';

const SEED = 20_261_216;
const QUEUE_TIMEOUT_MS = 100;

type Op =
  | { kind: 'call'; abortable: boolean }
  | { kind: 'resolve'; pick: number }
  | { kind: 'reject'; pick: number }
  | { kind: 'abort'; pick: number }
  | { kind: 'wait'; ms: number }
  | { kind: 'grow'; by: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.boolean().map((abortable) => ({ kind: 'call' as const, abortable })) },
  { weight: 3, arbitrary: fc.nat(50).map((pick) => ({ kind: 'resolve' as const, pick })) },
  { weight: 2, arbitrary: fc.nat(50).map((pick) => ({ kind: 'reject' as const, pick })) },
  { weight: 1, arbitrary: fc.nat(50).map((pick) => ({ kind: 'abort' as const, pick })) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 150 }).map((ms) => ({ kind: 'wait' as const, ms })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 2 }).map((by) => ({ kind: 'grow' as const, by })),
  },
);

interface Call {
  readonly id: number;
  readonly controller: AbortController | undefined;
  started: boolean;
  /** The work it started, settled by the test. */
  work: ReturnType<typeof deferred<number>> | undefined;
  workSettled: boolean;
  /** What the caller got. */
  outcome: 'pending' | 'ok' | 'failed' | 'bulkhead-full' | 'aborted' | 'other';
}

describe('bulkhead slot accounting (property)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('holds its invariants after every step of random call sequences', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(op, { minLength: 1, maxLength: 40 }),
        async (maxConcurrent, maxQueue, ops) => {
          let cap = maxConcurrent;
          const base = {
            timeoutMs: false as const,
            // Never opens within a run: the outcomes of the work are all this test looks at.
            window: { type: 'count' as const, size: 1_000 },
            minimumThroughput: 1_000,
            failureRateThreshold: 1,
          };
          const breaker = new Breaker('bulkhead', {
            ...base,
            bulkhead: { maxConcurrent, maxQueue, queueTimeoutMs: QUEUE_TIMEOUT_MS },
          });
          const calls: Call[] = [];
          const startOrder: number[] = [];
          let failedWork = 0;
          const settle = () => vi.advanceTimersByTimeAsync(0);

          const check = () => {
            const snapshot = breaker.snapshot();
            const running = calls.filter(
              (c) => c.started && !c.workSettled && c.outcome === 'pending',
            ).length;
            const waiting = calls.filter((c) => !c.started && c.outcome === 'pending').length;
            expect(snapshot.bulkhead).toEqual({
              maxConcurrent: cap,
              maxQueue,
              active: running,
              queued: waiting,
            });
            expect(running).toBeLessThanOrEqual(cap);
            expect(waiting).toBeLessThanOrEqual(maxQueue);
            expect(snapshot.state).toBe('closed');
            expect(snapshot.totals.failures.total).toBe(failedWork);
            expect(snapshot.totals.rejected.total).toBe(
              calls.filter((c) => c.outcome === 'bulkhead-full').length,
            );
            // Oldest first: the calls that started did so in the order they were made.
            expect(startOrder.every((id, k) => k === 0 || startOrder[k - 1]! < id)).toBe(true);
          };

          const start = (abortable: boolean) => {
            const call: Call = {
              id: calls.length,
              controller: abortable ? new AbortController() : undefined,
              started: false,
              work: undefined,
              workSettled: false,
              outcome: 'pending',
            };
            calls.push(call);
            breaker
              .execute(
                () => {
                  call.started = true;
                  startOrder.push(call.id);
                  call.work = deferred<number>();
                  return call.work.promise;
                },
                { signal: call.controller?.signal },
              )
              .then(
                () => (call.outcome = 'ok'),
                (error: unknown) => {
                  const reason = (error as { reason?: unknown }).reason;
                  call.outcome =
                    reason === 'bulkhead-full'
                      ? 'bulkhead-full'
                      : error === call.controller?.signal.reason
                        ? 'aborted'
                        : (error as Error).message === 'work failed'
                          ? 'failed'
                          : 'other';
                },
              );
          };
          const running = () => calls.filter((c) => c.started && !c.workSettled);

          for (const step of ops) {
            if (step.kind === 'call') start(step.abortable);
            else if (step.kind === 'resolve' || step.kind === 'reject') {
              const pool = running();
              const call = pool[step.pick % Math.max(1, pool.length)];
              if (call !== undefined) {
                call.workSettled = true;
                if (step.kind === 'resolve') call.work!.resolve(1);
                else {
                  // A call the caller already left is not counted, whatever its work does.
                  if (call.outcome === 'pending') failedWork++;
                  call.work!.reject(new Error('work failed'));
                }
              }
            } else if (step.kind === 'abort') {
              const pool = calls.filter(
                (c) => c.controller !== undefined && c.outcome === 'pending',
              );
              pool[step.pick % Math.max(1, pool.length)]?.controller!.abort(new Error('left'));
            } else if (step.kind === 'wait') {
              await vi.advanceTimersByTimeAsync(step.ms);
            } else {
              cap += step.by;
              breaker.reconfigure({
                ...base,
                bulkhead: { maxConcurrent: cap, maxQueue, queueTimeoutMs: QUEUE_TIMEOUT_MS },
              });
            }
            await settle();
            check();
          }

          // The end: the work finishes, the queue drains or times out, and no caller is left waiting.
          for (let round = 0; round < 50 && calls.some((c) => c.outcome === 'pending'); round++) {
            for (const call of running()) {
              call.workSettled = true;
              call.work!.resolve(1);
            }
            await vi.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);
          }
          expect(calls.filter((c) => c.outcome === 'pending' || c.outcome === 'other')).toEqual([]);
          expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});
