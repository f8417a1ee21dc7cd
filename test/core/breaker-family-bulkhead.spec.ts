/**
 * A per-key family whose children have a bulkhead: a child with calls holding
 * or waiting for a slot is never evicted, so its key's next calls still find
 * its slots taken (before, keys churning past `maxKeys` evicted it, and the
 * key's next child started with every slot free: 40 to 100 calls ran at once
 * against a target capped at 2). When every held child is failing or busy, a
 * new key shares the overflow child, whose own bulkhead caps them together.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Breaker, OVERFLOW_KEY } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';

const SEED = 20_261_204;
const ticks = async (n = 6) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

/** A family of `maxKeys` children capped at `cap` calls each, and the calls running per key. */
function family(maxKeys: number, cap: number, maxQueue = 0) {
  const breaker = new Breaker('targets', {
    timeoutMs: false,
    perKey: { maxKeys },
    bulkhead: { maxConcurrent: cap, maxQueue },
  });
  const running = new Map<string, number>();
  let mostAtOnce = 0;
  const gates: { key: string; open(): void }[] = [];
  /** A call for `key` that runs until its gate is opened; resolves with how it ended. */
  const call = (key: string): Promise<string> =>
    breaker
      .forKey(key)
      .execute(() => {
        const now = (running.get(key) ?? 0) + 1;
        running.set(key, now);
        mostAtOnce = Math.max(mostAtOnce, now);
        const gate = deferred<void>();
        gates.push({ key, open: () => gate.resolve() });
        return gate.promise.then(() => {
          running.set(key, running.get(key)! - 1);
          return 'ran';
        });
      })
      .catch((error: { reason?: string }) => error.reason ?? 'other');
  return { breaker, running, gates, call, mostAtOnce: () => mostAtOnce };
}

describe('per-key family with a bulkhead: eviction and calls in flight', () => {
  it('keys churning past maxKeys do not evict a child with calls in flight: its key stays capped', async () => {
    const f = family(2, 2);
    const a = f.breaker.forKey('a');
    const inFlight = [f.call('a'), f.call('a')];
    await ticks();
    // Other keys come and go: each needs a slot in a family of 2.
    for (let i = 0; i < 50; i++) {
      const done = f.call(`k${i}`);
      await ticks();
      f.gates.find((g) => g.key === `k${i}`)!.open();
      expect(await done).toBe('ran');
    }
    expect(f.breaker.forKey('a')).toBe(a);
    const more = await Promise.all(Array.from({ length: 40 }, () => f.call('a')));
    expect(more).toEqual(Array.from({ length: 40 }, () => 'bulkhead-full'));
    expect(f.mostAtOnce()).toBe(2);
    expect(f.breaker.snapshot().family).toMatchObject({ keys: 2, evicted: 49 });
    for (const gate of f.gates.filter((g) => g.key === 'a')) gate.open();
    expect(await Promise.all(inFlight)).toEqual(['ran', 'ran']);
  });

  it('a waiting call keeps its child too; once no call holds a slot, the child may be evicted', async () => {
    const f = family(1, 1, 1);
    const a = f.breaker.forKey('a');
    const first = f.call('a');
    const queued = f.call('a');
    await ticks();
    expect(a.snapshot().bulkhead).toMatchObject({ active: 1, queued: 1 });
    // The only held child is busy: a new key shares the overflow child.
    const other = f.call('b');
    await ticks();
    expect(f.breaker.forKey('b').key).toBe(OVERFLOW_KEY);
    expect(f.breaker.snapshot().family).toMatchObject({ keys: 2, evicted: 0, overflowed: 2 });
    f.gates.find((g) => g.key === 'b')!.open();
    expect(await other).toBe('ran');
    f.gates[0]!.open();
    expect(await first).toBe('ran');
    await ticks();
    f.gates.find((g, i) => g.key === 'a' && i > 0)!.open();
    expect(await queued).toBe('ran');
    // Idle now: the next new key evicts it.
    expect(f.breaker.forKey('c').key).toBe('c');
    expect(f.breaker.snapshot().family).toMatchObject({ keys: 2, evicted: 1 });
    expect(f.breaker.forKey('a')).not.toBe(a);
  });

  it('holds under random calls, settlements and churn: no key runs more than its cap on its own children (property)', async () => {
    type Op = { kind: 'call'; key: number } | { kind: 'settle'; pick: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 3, arbitrary: fc.nat(5).map((key) => ({ kind: 'call' as const, key })) },
      { weight: 2, arbitrary: fc.nat(30).map((pick) => ({ kind: 'settle' as const, pick })) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 2 }),
        fc.array(op, { minLength: 1, maxLength: 60 }),
        async (maxKeys, cap, ops) => {
          const breaker = new Breaker('targets', {
            timeoutMs: false,
            perKey: { maxKeys },
            bulkhead: { maxConcurrent: cap },
          });
          // Calls running, by the child that admitted them.
          const running = new Map<Breaker, number>();
          const open: (() => void)[] = [];
          const callers: Promise<unknown>[] = [];
          for (const step of ops) {
            if (step.kind === 'call') {
              const child = breaker.forKey(`key-${step.key}`);
              callers.push(
                child
                  .execute(() => {
                    running.set(child, (running.get(child) ?? 0) + 1);
                    const gate = deferred<void>();
                    open.push(() => gate.resolve());
                    return gate.promise.then(() => {
                      running.set(child, running.get(child)! - 1);
                    });
                  })
                  .catch(() => undefined),
              );
            } else {
              open.splice(step.pick % Math.max(1, open.length), 1)[0]?.();
            }
            await ticks();
            const byKey = new Map<string, number>();
            for (const [child, calls] of running) {
              expect(calls).toBeLessThanOrEqual(cap);
              if (child.key !== OVERFLOW_KEY)
                byKey.set(child.key!, (byKey.get(child.key!) ?? 0) + calls);
            }
            for (const calls of byKey.values()) expect(calls).toBeLessThanOrEqual(cap);
            expect(breaker.snapshot().family!.keys).toBeLessThanOrEqual(maxKeys + 1);
          }
          for (const release of open.splice(0)) release();
          await Promise.all(callers);
          for (const child of breaker.children())
            expect(child.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});
