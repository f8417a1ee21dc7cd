import { describe, expect, it } from 'vitest';
import { Breaker, CallRejectedError } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);
const ok = (b: Breaker) => b.execute(() => 'ok').catch((e: unknown) => e);

describe('per-key families', () => {
  it('gives each key its own breaker, created from the family options on first use', async () => {
    const family = new Breaker('upstreams', { perKey: { maxKeys: 10 }, consecutiveFailures: 1 });
    const a = family.forKey('a.example');
    expect(family.forKey('a.example')).toBe(a);
    expect(a).toMatchObject({ name: 'upstreams[a.example]', key: 'a.example', parent: family });
    expect(a.config).toBe(family.config);
    await fail(a);
    expect(a.state).toBe('open');
    expect(await ok(family.forKey('b.example'))).toBe('ok');
    expect(family.snapshot().family).toEqual({
      keys: 2,
      maxKeys: 10,
      unhealthyKeys: 1,
      evicted: 0,
      overflowed: 0,
    });
  });

  it('refuses direct calls on the family and forKey() on a plain breaker', () => {
    const family = new Breaker('family', { perKey: {} });
    expect(() => family.execute(() => 1)).toThrow(
      'Circuit breaker "family" is a per-key family: call forKey(key).execute() so that each target has its own breaker.',
    );
    expect(() => new Breaker('plain').forKey('x')).toThrow(
      'Circuit breaker "plain" is not per-key: configure perKey: { maxKeys } to use forKey().',
    );
    expect(() => family.forKey(42 as never)).toThrow('forKey() takes a string key, got number.');
  });

  it('evicts the least recently used closed child past maxKeys, never an open one', async () => {
    const family = new Breaker('lru', { perKey: { maxKeys: 3 }, consecutiveFailures: 1 });
    const a = family.forKey('a');
    await fail(a); // a is open: not evictable
    family.forKey('b');
    family.forKey('c');
    family.forKey('b'); // b is now more recent than c
    family.forKey('d'); // evicts c, the least recently used closed child
    expect(family.snapshot().family).toMatchObject({ keys: 3, evicted: 1 });
    expect(family.forKey('a')).toBe(a);
    expect(family.forKey('a').state).toBe('open');
    expect(family.snapshot().family).toMatchObject({ keys: 3, evicted: 1 });
  });

  it('keeps the order and time of use when one key is used many times in a row', () => {
    const clock = new ManualClock();
    const family = new Breaker('recent', { perKey: { maxKeys: 3, idleMs: 1_000 } }, { clock });
    const a = family.forKey('a');
    family.forKey('b');
    family.forKey('a');
    expect(family.forKey('a')).toBe(a);
    clock.advance(600);
    family.forKey('a'); // used again: not idle at 1 100 ms
    clock.advance(500);
    family.forKey('c'); // b is idle
    expect([...family.children()].map((child) => child.key)).toEqual(['a', 'c']);
    family.forKey('d');
    family.forKey('d');
    family.forKey('e'); // evicts a, the least recently used
    expect([...family.children()].map((child) => child.key)).toEqual(['c', 'd', 'e']);
    expect(family.snapshot().family).toMatchObject({ keys: 3, evicted: 2 });
  });

  it('gives a new child to the key used last once its child is evicted', () => {
    const family = new Breaker('single', { perKey: { maxKeys: 1 } });
    const x = family.forKey('x');
    expect(family.forKey('x')).toBe(x);
    family.forKey('y'); // evicts x
    const again = family.forKey('x'); // evicts y
    expect(again).not.toBe(x);
    expect(family.forKey('x')).toBe(again);
    expect([...family.children()].map((child) => child.key)).toEqual(['x']);
    expect(family.snapshot().family).toMatchObject({ keys: 1, evicted: 2 });
  });

  it('shares one overflow child when every held child is failing, so memory stays bounded', async () => {
    const family = new Breaker('full', { perKey: { maxKeys: 2 }, consecutiveFailures: 1 });
    await fail(family.forKey('a'));
    await fail(family.forKey('b'));
    const x = family.forKey('x');
    expect(x.name).toBe('full[…overflow]');
    expect(family.forKey('y')).toBe(x);
    expect(family.snapshot().family).toMatchObject({ keys: 3, overflowed: 2 });
  });

  it('evicts closed children idle longer than idleMs', () => {
    const clock = new ManualClock();
    const family = new Breaker('idle', { perKey: { maxKeys: 100, idleMs: 1_000 } }, { clock });
    const a = family.forKey('a');
    clock.advance(1_000);
    family.forKey('b');
    expect(family.snapshot().family).toMatchObject({ keys: 1, evicted: 1 });
    expect(family.forKey('a')).not.toBe(a);
  });

  it('stays bounded under 100,000 distinct keys', async () => {
    const family = new Breaker('untrusted', { perKey: { maxKeys: 1_000 } });
    for (let i = 0; i < 100_000; i++) await family.forKey(`key-${i}`).execute(() => i);
    expect(family.snapshot().family).toMatchObject({ keys: 1_000, evicted: 99_000 });
  });

  describe('aggregate level', () => {
    /** Four known targets, two of them open: the family has just opened (0.5 >= 0.5). */
    const openedFamily = async () => {
      const clock = new ManualClock();
      const family = aggregate(clock);
      for (const key of ['a', 'b', 'c', 'd']) await ok(family.forKey(key));
      await fail(family.forKey('a'));
      await fail(family.forKey('b'));
      return { clock, family };
    };
    const aggregate = (clock: ManualClock) =>
      new Breaker(
        'fleet',
        {
          perKey: { maxKeys: 100 },
          aggregate: { openWhenOpenRatio: 0.5, minKeys: 4 },
          consecutiveFailures: 1,
          openDurationMs: 1_000,
        },
        { clock },
      );

    it('opens the family when that share of known targets (at least minKeys) is open, rejecting every key', async () => {
      const clock = new ManualClock();
      const family = aggregate(clock);
      const events: string[] = [];
      family.on('stateChange', (e) => events.push(`${e.from}->${e.to} (${e.reason})`));
      for (const key of ['a', 'b', 'c', 'd']) await ok(family.forKey(key));
      await fail(family.forKey('a'));
      expect(family.state).toBe('closed'); // 1 of 4
      await fail(family.forKey('b'));
      expect(family.state).toBe('open'); // 2 of 4 = 0.5
      expect(events).toEqual(['closed->open (open-ratio)']);
      const rejection = (await ok(family.forKey('c'))) as CallRejectedError;
      expect(rejection).toBeInstanceOf(CallRejectedError);
      expect(rejection).toMatchObject({
        breakerName: 'fleet',
        reason: 'open',
        retryAfterMs: 1_000,
      });
      expect(family.forKey('c').snapshot().totals.admitted).toBe(1); // the child was never asked
    });

    it('does not count children isolated or forced open by hand: an operator decision is no evidence of failure', async () => {
      const clock = new ManualClock();
      const family = aggregate(clock);
      for (const key of ['a', 'b', 'c', 'd']) await ok(family.forKey(key));
      family.forKey('a').force('open', { reason: 'maintenance of host a' });
      family.forKey('b').isolate();
      expect(family.state).toBe('closed');
      expect(family.snapshot().family).toMatchObject({ keys: 4, unhealthyKeys: 2 });
      // One real failure is 1 failing of 4: still below the ratio, whatever the isolated children.
      await fail(family.forKey('c'));
      expect(family.state).toBe('closed');
      await fail(family.forKey('d'));
      expect(family.state).toBe('open'); // 2 failing of 4 = 0.5
      // Released, a child that was isolated counts again once it fails.
      family.reset();
      for (const key of ['a', 'b', 'c', 'd']) await ok(family.forKey(key));
      expect(family.snapshot().family).toMatchObject({ unhealthyKeys: 0 });
    });

    it('does not open below minKeys', async () => {
      const clock = new ManualClock();
      const family = aggregate(clock);
      await fail(family.forKey('a'));
      await fail(family.forKey('b'));
      await fail(family.forKey('c'));
      expect(family.state).toBe('closed');
    });

    it('after its open duration, probes through whichever key is asked for and closes on success', async () => {
      const { clock, family } = await openedFamily();
      clock.advance(1_000);
      expect(family.state).toBe('half-open');
      // A child's own rejection counts as ignored and returns the family's probe permit.
      family.forKey('c').isolate();
      expect(await ok(family.forKey('c'))).toMatchObject({
        breakerName: 'fleet[c]',
        reason: 'isolated',
      });
      expect(family.snapshot().halfOpen).toMatchObject({ probesAdmitted: 0 });
      expect(await ok(family.forKey('d'))).toBe('ok');
      expect(family.state).toBe('closed');
    });

    it('reopens when the probe fails', async () => {
      const { clock, family } = await openedFamily();
      clock.advance(1_000);
      await fail(family.forKey('d'));
      expect(family.snapshot()).toMatchObject({ state: 'open', openUntil: clock.now() + 1_000 });
    });

    it('reset() on the family resets every child', async () => {
      const { family } = await openedFamily();
      family.reset();
      expect(family.state).toBe('closed');
      expect(family.forKey('a').state).toBe('closed');
      expect(family.snapshot().family?.unhealthyKeys).toBe(0);
    });

    it('needs perKey', () => {
      expect(() => new Breaker('x', { aggregate: { openWhenOpenRatio: 0.5 } })).toThrow(
        'Circuit breaker "x": option "aggregate" needs "perKey": only a per-key family has targets to aggregate.',
      );
    });
  });
});

describe('per-key eviction when many children are failing', () => {
  it('evicts a closed child beyond the least recently used failing ones, and overflows only when all are failing', async () => {
    const family = new Breaker('mixed', { perKey: { maxKeys: 100 }, consecutiveFailures: 1 });
    for (let i = 0; i < 40; i++) await fail(family.forKey(`open-${i}`));
    for (let i = 0; i < 60; i++) await ok(family.forKey(`closed-${i}`));
    const fresh = family.forKey('new-a');
    expect(fresh.name).toBe('mixed[new-a]');
    expect(family.snapshot().family).toMatchObject({ keys: 100, evicted: 1, overflowed: 0 });
    expect(family.forKey('open-0').state).toBe('open'); // failing children are never evicted
  });
});

describe('the overflow child', () => {
  it('is not a held child: once one held child closes, a new key evicts it instead of overflowing', async () => {
    const clock = new ManualClock();
    const family = new Breaker(
      'hosts',
      { perKey: { maxKeys: 3 }, consecutiveFailures: 1, openDurationMs: 1_000 },
      { clock },
    );
    const a = family.forKey('a');
    await fail(a);
    await fail(family.forKey('b'));
    await fail(family.forKey('c'));
    const overflow = family.forKey('d');
    await fail(overflow); // the overflow child opens too
    expect(overflow.state).toBe('open');
    clock.advance(1_000);
    expect(await ok(a)).toBe('ok'); // a's probe succeeds: a is closed and evictable
    expect(a.state).toBe('closed');
    const e = family.forKey('e');
    expect(e).not.toBe(overflow);
    expect(e.key).toBe('e');
    expect(await ok(e)).toBe('ok');
    expect(family.snapshot().family).toMatchObject({
      keys: 4,
      evicted: 1,
      overflowed: 1,
      unhealthyKeys: 3,
    });
    expect([...family.children()].map((child) => child.key)).toEqual(['b', 'c', 'e', overflow.key]);
  });
});

describe('onEvict', () => {
  it('tells of every evicted child (least recently used or idle), never of the overflow child, until unsubscribed', async () => {
    const clock = new ManualClock();
    const family = new Breaker(
      'evictions',
      { perKey: { maxKeys: 2, idleMs: 1_000 }, consecutiveFailures: 1 },
      { clock },
    );
    const evicted: (string | undefined)[] = [];
    const off = family.onEvict((child) => evicted.push(child.key));
    family.forKey('a');
    family.forKey('b');
    family.forKey('c'); // a is the least recently used
    clock.advance(1_000);
    family.forKey('d'); // b and c are idle
    await fail(family.forKey('d'));
    await fail(family.forKey('e'));
    family.forKey('f'); // both held children are open: overflow, nothing evicted
    expect(evicted).toEqual(['a', 'b', 'c']);
    off();
    clock.advance(1_000);
    family.forKey('d').reset();
    family.forKey('g');
    expect(evicted).toEqual(['a', 'b', 'c']);
    expect(family.snapshot().family).toMatchObject({ evicted: 4, overflowed: 1 });
    expect(new Breaker('plain').onEvict(() => undefined)()).toBeUndefined();
  });
});
