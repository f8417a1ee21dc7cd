/**
 * The limiter's place accounting under random sequences of arrivals (each of
 * a random criticality, waiting or not, abortable or not), settlements,
 * aborts and time passing (fixed seed): after every step the requests
 * holding a place are exactly the permits not yet settled and never more than
 * the limit, the queue never exceeds its bound and is empty while a place is
 * free, every shed request is counted once under its criticality, and at the
 * end (every permit settled, the queue's timeouts passed) every caller has
 * its answer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CallRejectedError,
  ConcurrencyLimiter,
  CRITICALITIES,
  type Criticality,
  type LimitPermit,
} from '../../../lib/core/index.js';
import { ManualClock } from '../../../lib/testing/manual-clock.js';

const SEED = 20_261_206;
const LIMIT = 3;
const MAX_QUEUE = 2;
const QUEUE_TIMEOUT_MS = 100;

type Op =
  | { kind: 'arrive'; criticality: Criticality; waits: boolean; abortable: boolean }
  | { kind: 'settle'; pick: number; how: 'succeed' | 'drop' | 'release' }
  | { kind: 'abort'; pick: number }
  | { kind: 'wait'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record({
        criticality: fc.constantFrom(...CRITICALITIES),
        waits: fc.boolean(),
        abortable: fc.boolean(),
      })
      .map((r) => ({ kind: 'arrive' as const, ...r })),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({ pick: fc.nat(40), how: fc.constantFrom('succeed', 'drop', 'release') })
      .map((r) => ({ kind: 'settle' as const, ...(r as { pick: number; how: 'succeed' }) })),
  },
  { weight: 1, arbitrary: fc.nat(40).map((pick) => ({ kind: 'abort' as const, pick })) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 150 }).map((ms) => ({ kind: 'wait' as const, ms })),
  },
);

interface Caller {
  readonly criticality: Criticality;
  readonly controller: AbortController | undefined;
  outcome: 'pending' | 'admitted' | 'shed' | 'aborted';
  permit: LimitPermit | undefined;
  settled: boolean;
}

const flush = async () => {
  for (let i = 0; i < 4; i++) await Promise.resolve();
};

describe('ConcurrencyLimiter place accounting (property)', () => {
  it('holds its invariants after every step of random request sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
        const clock = new ManualClock();
        const limiter = new ConcurrencyLimiter(
          'api',
          {
            algorithm: 'fixed',
            initialLimit: LIMIT,
            maxQueue: MAX_QUEUE,
            queueTimeoutMs: QUEUE_TIMEOUT_MS,
          },
          { clock },
        );
        const callers: Caller[] = [];
        const arrive = (o: Extract<Op, { kind: 'arrive' }>) => {
          const caller: Caller = {
            criticality: o.criticality,
            controller: o.abortable ? new AbortController() : undefined,
            outcome: 'pending',
            permit: undefined,
            settled: false,
          };
          callers.push(caller);
          const admit = (permit: LimitPermit) => {
            caller.outcome = 'admitted';
            caller.permit = permit;
          };
          const refuse = (error: unknown) => {
            if (error instanceof CallRejectedError) caller.outcome = 'shed';
            else if (error === caller.controller?.signal.reason) caller.outcome = 'aborted';
            else throw error;
          };
          if (!o.waits) {
            const got = limiter.tryAcquire(o.criticality);
            if (got instanceof CallRejectedError) refuse(got);
            else admit(got);
            return;
          }
          const got = limiter.acquire(o.criticality, caller.controller?.signal);
          if (got instanceof Promise) got.then(admit, refuse);
          else admit(got);
        };
        const check = () => {
          const snapshot = limiter.snapshot();
          const holding = callers.filter((c) => c.outcome === 'admitted' && !c.settled).length;
          const pending = callers.filter((c) => c.outcome === 'pending').length;
          expect(snapshot.inFlight).toBe(holding);
          expect(snapshot.inFlight).toBeLessThanOrEqual(LIMIT);
          expect(snapshot.queued).toBe(pending);
          expect(snapshot.queued).toBeLessThanOrEqual(MAX_QUEUE);
          if (snapshot.queued > 0) expect(snapshot.inFlight).toBe(LIMIT);
          for (const criticality of CRITICALITIES) {
            const shed = callers.filter(
              (c) => c.outcome === 'shed' && c.criticality === criticality,
            ).length;
            expect(snapshot.shedBy[criticality]).toBe(shed);
          }
          expect(snapshot.admitted).toBe(callers.filter((c) => c.permit !== undefined).length);
        };
        for (const o of ops) {
          if (o.kind === 'arrive') arrive(o);
          else if (o.kind === 'settle') {
            const holding = callers.filter((c) => c.outcome === 'admitted' && !c.settled);
            const caller = holding[o.pick % Math.max(1, holding.length)];
            if (caller !== undefined) {
              caller.settled = true;
              caller.permit![o.how]();
            }
          } else if (o.kind === 'abort') {
            const abortable = callers.filter((c) => c.controller !== undefined);
            abortable[o.pick % Math.max(1, abortable.length)]?.controller!.abort(new Error('gone'));
          } else clock.advance(o.ms);
          await flush();
          check();
        }
        for (const caller of callers) {
          if (caller.outcome === 'admitted' && !caller.settled) {
            caller.settled = true;
            caller.permit!.release();
          }
        }
        await flush();
        clock.advance(QUEUE_TIMEOUT_MS);
        await flush();
        for (const caller of callers) {
          if (caller.outcome === 'admitted' && !caller.settled) {
            caller.settled = true;
            caller.permit!.release();
          }
        }
        await flush();
        check();
        expect(callers.filter((c) => c.outcome === 'pending')).toEqual([]);
        expect(limiter.snapshot()).toMatchObject({ inFlight: 0, queued: 0 });
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
