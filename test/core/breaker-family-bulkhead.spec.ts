/**
 * A per-key family whose children have a bulkhead. A child evicted with calls
 * holding or waiting for a slot leaves its bulkhead to its key's next child,
 * so the key's next calls still find those slots taken (before the first fix,
 * keys churning past `maxKeys` evicted it and the key's next child started
 * with every slot free: 40 to 100 calls ran at once against a target capped
 * at 2). Busy children may still be evicted: when they could not (the first
 * fix), one slow call on each of `maxKeys` keys sent every new tenant to the
 * overflow child, one bulkhead and one state for all of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Breaker, FAMILY_OVERFLOW_KEY } from '../../lib/core/index.js';
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

/** The bulkheads a family keeps for keys whose evicted child still has calls (white-box: must drain to 0). */
const retained = (breaker: Breaker): number =>
  (breaker['keyed'] as unknown as { retained?: Map<string, unknown> }).retained?.size ?? 0;

describe('per-key family with a bulkhead: eviction and calls in flight', () => {
  it('keys churning past maxKeys evict a child with calls in flight, but its key stays capped', async () => {
    const f = family(2, 2);
    const inFlight = [f.call('a'), f.call('a')];
    await ticks();
    // Other keys come and go: each needs a slot in a family of 2.
    const churn = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const done = f.call(`k${i}`);
        await ticks();
        f.gates.find((g) => g.key === `k${i}`)!.open();
        expect(await done).toBe('ran');
      }
    };
    await churn(0, 50);
    expect(retained(f.breaker)).toBe(1);
    const more = await Promise.all(Array.from({ length: 40 }, () => f.call('a')));
    expect(more).toEqual(Array.from({ length: 40 }, () => 'bulkhead-full'));
    expect(f.breaker.forKey('a').snapshot().bulkhead).toMatchObject({ active: 2, queued: 0 });
    // Its new child is evicted again while the same calls run: the cap still holds.
    await churn(50, 55);
    expect(await f.call('a')).toBe('bulkhead-full');
    expect(f.mostAtOnce()).toBe(2);
    expect(f.breaker.snapshot().family).toMatchObject({ keys: 2, evicted: 56, overflowed: 0 });
    for (const gate of f.gates.filter((g) => g.key === 'a')) gate.open();
    expect(await Promise.all(inFlight)).toEqual(['ran', 'ran']);
    // Its calls done, the bulkhead is let go: memory is bounded by the calls in flight.
    expect(retained(f.breaker)).toBe(0);
    const again = f.call('a');
    await ticks();
    expect(f.breaker.forKey('a').snapshot().bulkhead).toMatchObject({ active: 1, queued: 0 });
    f.gates.at(-1)!.open();
    expect(await again).toBe('ran');
  });

  it('one slow call on each of maxKeys keys does not starve a new tenant: it gets a child of its own', async () => {
    const f = family(2, 1);
    const slow = [f.call('a'), f.call('b'), f.call('c')];
    await ticks();
    expect(f.running).toEqual(
      new Map([
        ['a', 1],
        ['b', 1],
        ['c', 1],
      ]),
    );
    const d = f.call('d');
    await ticks();
    expect(f.breaker.forKey('d').key).toBe('d');
    expect(f.running.get('d')).toBe(1);
    expect(f.breaker.snapshot().family).toMatchObject({ keys: 2, evicted: 2, overflowed: 0 });
    // peekKey() answers as a call would: 'a' is no longer held, but its next child is full.
    expect(f.breaker.peekKey('a')).toMatchObject({ permitted: false, reason: 'bulkhead-full' });
    expect(f.breaker.peekKey('e').permitted).toBe(true);
    for (const gate of f.gates) gate.open();
    expect(await Promise.all([...slow, d])).toEqual(['ran', 'ran', 'ran', 'ran']);
    expect(retained(f.breaker)).toBe(0);
    expect(f.breaker.peekKey('a').permitted).toBe(true);
  });

  it('a key with calls on the overflow child keeps going there until they are over (N6)', async () => {
    const f = family(1, 1);
    // The family is full of a child that cannot go: 'c' shares the overflow child.
    f.breaker.forKey('a').isolate();
    const first = f.call('c');
    await ticks();
    expect(f.running.get('c')).toBe(1);
    // 'a' can go now, but 'c' would get a child with its slot free beside its call still running.
    f.breaker.forKey('a').release();
    expect(f.breaker.peekKey('c')).toMatchObject({ permitted: false, reason: 'bulkhead-full' });
    expect(await f.call('c')).toBe('bulkhead-full');
    expect(() => f.breaker.forKey('c').acquire()).toThrow(
      expect.objectContaining({ reason: 'bulkhead-full' }),
    );
    expect([...f.breaker.children()].map((child) => child.key)).toEqual(['a', FAMILY_OVERFLOW_KEY]);
    // Another key, with no call there, gets a child of its own.
    const other = f.call('d');
    await ticks();
    expect(f.breaker.forKey('d').key).toBe('d');
    f.gates[0]!.open();
    expect(await first).toBe('ran');
    // Its call over, 'c' moves off: a child of its own, every slot free.
    const next = f.call('c');
    await ticks();
    expect(f.breaker.forKey('c').key).toBe('c');
    for (const gate of f.gates.slice(1)) gate.open();
    expect(await Promise.all([other, next])).toEqual(['ran', 'ran']);
    expect(f.mostAtOnce()).toBe(1);
    expect(f.breaker.snapshot().family).toMatchObject({ keys: 2, overflowed: 3 });
    const counted = (f.breaker['keyed'] as unknown as { onOverflow?: Map<string, number> })
      .onOverflow;
    expect(counted?.size).toBe(0);
  });

  it('a key sent to the overflow child with a kept bulkhead is capped by it there too', async () => {
    const f = family(1, 2);
    const first = f.call('b');
    await ticks();
    // 'a' evicts 'b' (busy: its bulkhead is kept for it), then cannot go.
    f.breaker.forKey('a').isolate();
    // A call on 'b' now goes to the overflow child (made by it), and takes the kept bulkhead's other slot.
    expect(f.breaker.peekKey('b')).toMatchObject({ permitted: true, state: 'closed' });
    const second = f.call('b');
    await ticks();
    expect(f.running.get('b')).toBe(2);
    expect([...f.breaker.children()].map((child) => child.key)).toEqual(['a', FAMILY_OVERFLOW_KEY]);
    // The overflow child has a slot free, but 'b' runs its cap already (before the fix: a third call ran).
    expect(f.breaker.forKey(FAMILY_OVERFLOW_KEY).snapshot().bulkhead).toMatchObject({ active: 1 });
    expect(f.breaker.peekKey('b')).toMatchObject({ permitted: false, reason: 'bulkhead-full' });
    expect(await f.call('b')).toBe('bulkhead-full');
    f.gates[0]!.open();
    expect(await first).toBe('ran');
    // One of its calls over: 'b' may run one more, on the overflow child.
    const third = f.call('b');
    await ticks();
    expect(f.running.get('b')).toBe(2);
    for (const gate of f.gates.slice(1)) gate.open();
    expect(await Promise.all([second, third])).toEqual(['ran', 'ran']);
    expect(f.mostAtOnce()).toBe(2);
    expect(retained(f.breaker)).toBe(0);
    expect(f.breaker.peekKey('b')).toMatchObject({ permitted: true });
  });

  it("a waiting call moves with its bulkhead: the key's next child finds the slot and the queue taken", async () => {
    const f = family(1, 1, 1);
    const first = f.call('a');
    const queued = f.call('a');
    await ticks();
    expect(f.breaker.forKey('a').snapshot().bulkhead).toMatchObject({ active: 1, queued: 1 });
    // A new key evicts the busy child and gets its own.
    const other = f.call('b');
    await ticks();
    expect(f.running.get('b')).toBe(1);
    // Back to 'a' (evicting 'b', busy too): its slot and its queue are still taken.
    expect(await f.call('a')).toBe('bulkhead-full');
    expect(f.breaker.forKey('a').snapshot().bulkhead).toMatchObject({ active: 1, queued: 1 });
    expect(f.breaker.snapshot().family).toMatchObject({ keys: 1, evicted: 2, overflowed: 0 });
    f.gates[0]!.open();
    expect(await first).toBe('ran');
    await ticks();
    // The waiter, admitted by the evicted child, took the slot handed over.
    expect(f.breaker.forKey('a').snapshot().bulkhead).toMatchObject({ active: 1, queued: 0 });
    f.gates.find((g, i) => g.key === 'a' && i > 0)!.open();
    expect(await queued).toBe('ran');
    f.gates.find((g) => g.key === 'b')!.open();
    expect(await other).toBe('ran');
    expect(retained(f.breaker)).toBe(0);
    expect(f.mostAtOnce()).toBe(1);
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
              if (child.key !== FAMILY_OVERFLOW_KEY)
                byKey.set(child.key!, (byKey.get(child.key!) ?? 0) + calls);
            }
            for (const calls of byKey.values()) expect(calls).toBeLessThanOrEqual(cap);
            expect(breaker.snapshot().family!.keys).toBeLessThanOrEqual(maxKeys + 1);
            // Kept bulkheads are bounded by the calls running.
            expect(retained(breaker)).toBeLessThanOrEqual(open.length);
          }
          for (const release of open.splice(0)) release();
          await Promise.all(callers);
          for (const child of breaker.children())
            expect(child.snapshot().bulkhead).toMatchObject({ active: 0, queued: 0 });
          expect(retained(breaker)).toBe(0);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});
