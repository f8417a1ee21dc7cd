import { describe, expect, it } from 'vitest';
import { Breaker, isCallRejected } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { ManualClock } from '../helpers/manual-clock.js';

async function herdAtRecovery(maxProbes: number) {
  const clock = new ManualClock();
  const breaker = new Breaker(
    'herd',
    {
      consecutiveFailures: 1,
      openDurationMs: 1_000,
      halfOpen: { maxProbes, maxConcurrent: maxProbes },
    },
    { clock },
  );
  await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
  clock.advance(1_000);
  const dependency = deferred<string>();
  let reached = 0;
  const calls = Array.from({ length: 1_000 }, () =>
    breaker.execute(() => {
      reached++;
      return dependency.promise;
    }),
  );
  // Every call was decided synchronously, before the dependency answered: none is queued.
  const snapshot = breaker.snapshot();
  dependency.resolve('recovered');
  const settled = await Promise.allSettled(calls);
  return { breaker, reached, snapshot, settled };
}

describe('Breaker admission under concurrency', () => {
  it.each([1, 3])(
    '1,000 calls arriving together at the end of the open duration admit exactly %i probe(s)',
    async (budget) => {
      const { breaker, reached, snapshot, settled } = await herdAtRecovery(budget);
      expect(reached).toBe(budget);
      expect(snapshot.halfOpen).toMatchObject({ probesAdmitted: budget, probesInFlight: budget });
      expect(snapshot.totals.rejected['half-open-busy']).toBe(1_000 - budget);
      const fulfilled = settled.filter((s) => s.status === 'fulfilled');
      const rejected = settled.filter((s) => s.status === 'rejected');
      expect(fulfilled).toHaveLength(budget);
      expect(rejected).toHaveLength(1_000 - budget);
      expect(rejected.every((s) => isCallRejected((s as PromiseRejectedResult).reason))).toBe(true);
      expect(breaker.state).toBe('closed');
    },
  );
});
