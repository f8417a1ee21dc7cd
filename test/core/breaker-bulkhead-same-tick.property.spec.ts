/**
 * The bulkhead when everything lands in one tick (fixed seed): calls queued,
 * aborted, settled and slots handed over within the same turn of the event
 * loop, each a few microtasks apart. Found by it: an abort landing after a
 * queued call was handed a slot but before it ran was lost (the caller's
 * promise never settled, `fn` ran with a signal that never aborted, the slot
 * stayed taken). Invariants: every caller settles exactly once; the slots
 * taken are never more than the cap, and none is left at the end; an
 * aborted call is never counted as a success, a failure or a timeout: it is
 * `ignored` when it had started, and counts nothing when it had not (as an
 * abort in the queue); a call aborted before it started never starts.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Breaker, type CallPermit } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';

const SEED = 20_261_203;
const QUEUE_TIMEOUT_MS = 1_000;
const DEADLINE_MS = 5_000;

type Op =
  | { kind: 'call' }
  | { kind: 'hold' }
  | { kind: 'release'; pick: number }
  | { kind: 'settle'; pick: number; ok: boolean }
  | { kind: 'abort'; pick: number };

/** One operation, run after `hops` microtasks of its tick. */
interface Step {
  readonly op: Op;
  readonly hops: number;
}

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'call' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hold' as const }) },
  { weight: 2, arbitrary: fc.nat(20).map((pick) => ({ kind: 'release' as const, pick })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.nat(20), fc.boolean())
      .map(([pick, ok]) => ({ kind: 'settle' as const, pick, ok })),
  },
  { weight: 3, arbitrary: fc.nat(20).map((pick) => ({ kind: 'abort' as const, pick })) },
);
const step: fc.Arbitrary<Step> = fc.record({ op, hops: fc.nat(4) });

interface Call {
  readonly controller: AbortController;
  started: boolean;
  /** Whether the caller aborted, and whether the call had started then. */
  abortedBeforeStart: boolean;
  abortedWhileRunning: boolean;
  signal: AbortSignal | undefined;
  work: ReturnType<typeof deferred<number>> | undefined;
  workSettled: boolean;
  settlements: number;
  outcome: 'pending' | 'ok' | 'failed' | 'aborted' | 'bulkhead-full' | 'other';
}

describe('bulkhead: calls, aborts, settlements and hand-overs in one tick (property)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('settles every caller once, keeps the cap, and counts an aborted call as ignored or not at all', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.array(fc.array(step, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 8 }),
        async (maxConcurrent, maxQueue, deadline, ticks) => {
          const breaker = new Breaker('same-tick', {
            timeoutMs: deadline ? DEADLINE_MS : false,
            // Never opens within a run: the slot accounting is all this test looks at.
            window: { type: 'count', size: 1_000 },
            minimumThroughput: 1_000,
            failureRateThreshold: 1,
            bulkhead: { maxConcurrent, maxQueue, queueTimeoutMs: QUEUE_TIMEOUT_MS },
          });
          const calls: Call[] = [];
          const permits: CallPermit[] = [];
          let heldPermits = 0;
          let released = 0;
          let refusedPermits = 0;
          let mostHolding = 0;

          // At least these hold a slot: work not settled by the test, of a caller still there, and the permits.
          const holding = () =>
            calls.filter((c) => c.started && !c.workSettled && !c.controller.signal.aborted)
              .length + heldPermits;
          const observe = () => {
            mostHolding = Math.max(mostHolding, holding(), breaker.snapshot().bulkhead!.active);
          };

          const run = (o: Op): void => {
            if (o.kind === 'call') {
              const call: Call = {
                controller: new AbortController(),
                started: false,
                abortedBeforeStart: false,
                abortedWhileRunning: false,
                signal: undefined,
                work: undefined,
                workSettled: false,
                settlements: 0,
                outcome: 'pending',
              };
              calls.push(call);
              const settled = (outcome: Call['outcome']) => {
                call.settlements++;
                call.outcome = outcome;
              };
              breaker
                .execute(
                  ({ signal }) => {
                    call.started = true;
                    call.signal = signal;
                    observe();
                    call.work = deferred<number>();
                    return call.work.promise;
                  },
                  { signal: call.controller.signal },
                )
                .then(
                  () => settled('ok'),
                  (error: unknown) =>
                    settled(
                      error === call.controller.signal.reason
                        ? 'aborted'
                        : (error as { reason?: unknown }).reason === 'bulkhead-full'
                          ? 'bulkhead-full'
                          : (error as Error).message === 'work failed'
                            ? 'failed'
                            : 'other',
                    ),
                );
            } else if (o.kind === 'hold') {
              try {
                permits.push(breaker.acquire());
                heldPermits++;
                observe();
              } catch {
                // Full: acquire() never waits.
                refusedPermits++;
              }
            } else if (o.kind === 'release') {
              // Synchronous: the slot goes to the oldest waiter in this very turn.
              const permit = permits.splice(o.pick % Math.max(1, permits.length), 1)[0];
              if (permit !== undefined) {
                heldPermits--;
                released++;
                permit.succeed(1);
              }
            } else if (o.kind === 'settle') {
              const pool = calls.filter((c) => c.started && !c.workSettled);
              const call = pool[o.pick % Math.max(1, pool.length)];
              if (call === undefined) return;
              call.workSettled = true;
              if (o.ok) call.work!.resolve(1);
              else call.work!.reject(new Error('work failed'));
            } else {
              const pool = calls.filter((c) => c.settlements === 0 && !c.controller.signal.aborted);
              const call = pool[o.pick % Math.max(1, pool.length)];
              if (call === undefined) return;
              if (call.started) call.abortedWhileRunning = !call.workSettled;
              else call.abortedBeforeStart = true;
              call.controller.abort(new Error('left'));
            }
          };
          const later = (hops: number, fn: () => void): void => {
            if (hops === 0) fn();
            else queueMicrotask(() => later(hops - 1, fn));
          };

          for (const tick of ticks) {
            for (const s of tick) later(s.hops, () => run(s.op));
            await vi.advanceTimersByTimeAsync(0);
            observe();
            expect(mostHolding).toBeLessThanOrEqual(maxConcurrent);
          }

          // The end: every permit and every piece of work settles, the queue drains, no caller is left waiting.
          for (let round = 0; round < 20; round++) {
            for (const permit of permits.splice(0)) {
              heldPermits--;
              released++;
              permit.succeed(1);
            }
            for (const call of calls.filter((c) => c.started && !c.workSettled)) {
              call.workSettled = true;
              call.work!.resolve(1);
            }
            await vi.advanceTimersByTimeAsync(0);
          }
          await vi.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS);

          expect(calls.filter((c) => c.settlements !== 1 || c.outcome === 'other')).toEqual([]);
          expect(mostHolding).toBeLessThanOrEqual(maxConcurrent);
          expect(breaker.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
          for (const call of calls) {
            if (call.abortedBeforeStart) {
              expect(call.started).toBe(false);
              // Unless it had been refused already (the refusal reaches the caller a microtask later).
              expect(['aborted', 'bulkhead-full']).toContain(call.outcome);
            }
            if (call.abortedWhileRunning) expect(call.outcome).toBe('aborted');
            // A caller that left a running call aborted the call's own signal too.
            if (call.outcome === 'aborted' && call.started) expect(call.signal!.aborted).toBe(true);
          }
          const count = (outcome: Call['outcome']) => calls.filter((c) => c.outcome === outcome);
          expect(breaker.snapshot().totals).toMatchObject({
            successes: count('ok').length + released,
            failures: { total: count('failed').length },
            ignored: count('aborted').filter((c) => c.started).length,
            timeouts: 0,
            rejected: { total: count('bulkhead-full').length + refusedPermits },
          });
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});
