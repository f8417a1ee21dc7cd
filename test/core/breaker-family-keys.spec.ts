import { describe, expect, it } from 'vitest';
import { Breaker, BreakerConfigError } from '../../lib/core/index.js';

const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);
const HASHED = /^….*…[0-9a-f]{32}$/su;

describe('per-key families: key length', () => {
  it('stores a key longer than perKey.maxKeyLength (default 256) in a bounded form: its start and a hash', () => {
    const family = new Breaker('tenants', { perKey: { maxKeys: 10 } });
    const huge = `https://example.com/${'a'.repeat(1_000_000)}`;
    const child = family.forKey(huge);
    expect(child.key).toHaveLength(256);
    expect(child.key).toMatch(HASHED);
    expect(child.key!.startsWith('…https://example.com/aaa')).toBe(true);
    expect(child.name).toBe(`tenants[${child.key}]`);
    expect(child.snapshot().key).toBe(child.key);
    // Deterministic: the same long key is the same child.
    expect(family.forKey(`https://example.com/${'a'.repeat(1_000_000)}`)).toBe(child);
  });

  it('keeps two long keys that differ only past the bound apart', () => {
    const family = new Breaker('tenants', { perKey: { maxKeys: 10 } });
    const a = family.forKey(`${'x'.repeat(300)}a`);
    const b = family.forKey(`${'x'.repeat(300)}b`);
    expect(a).not.toBe(b);
    expect(a.key).not.toBe(b.key);
    // UTF-16 code units are hashed, so lone surrogates do not collapse into one replacement character.
    expect(family.forKey(`${'x'.repeat(300)}\uD800`)).not.toBe(
      family.forKey(`${'x'.repeat(300)}\uD801`),
    );
  });

  it('keeps keys up to the bound as they are, and honours a configured bound', () => {
    const family = new Breaker('short', { perKey: { maxKeys: 10, maxKeyLength: 64 } });
    const exact = 'k'.repeat(64);
    expect(family.forKey(exact).key).toBe(exact);
    const longer = family.forKey('k'.repeat(65)).key!;
    expect(longer).toHaveLength(64);
    expect(longer).toMatch(HASHED);
    expect(family.forKey('').key).toBe('');
  });

  it('never lets a short key take the child of a long one by spelling out its bounded form', () => {
    const family = new Breaker('spoof', { perKey: { maxKeys: 10 } });
    const long = family.forKey('z'.repeat(1_000));
    const spoof = family.forKey(long.key!);
    expect(spoof).not.toBe(long);
    expect(spoof.key).not.toBe(long.key);
    expect(spoof.key).toMatch(HASHED);
  });

  it('validates perKey.maxKeyLength, naming the breaker and the option', () => {
    for (const bad of [10, 64.5, '256', 0]) {
      const build = () => new Breaker('limits', { perKey: { maxKeyLength: bad as never } });
      expect(build).toThrow(BreakerConfigError);
      expect(build).toThrow(
        `Circuit breaker "limits": option "perKey.maxKeyLength" must be an integer >= 64, got `,
      );
    }
    expect(() => new Breaker('limits', { perKey: { maxKeysLength: 10 } as never })).toThrow(
      'Known options: perKey.maxKeys, perKey.idleMs, perKey.maxKeyLength.',
    );
  });
});

describe('the overflow child key', () => {
  it('is a key no caller can use: a real key "*overflow*" gets a child of its own, in names and events', async () => {
    const family = new Breaker('full', { perKey: { maxKeys: 2 }, consecutiveFailures: 1 });
    const real = family.forKey('*overflow*');
    await fail(real);
    await fail(family.forKey('b'));
    const overflow = family.forKey('c');
    expect(overflow).not.toBe(real);
    expect(overflow.key).not.toBe(real.key);
    expect(overflow.name).not.toBe(real.name);
    const keys = [...family.children()].map((child) => child.key);
    expect(new Set(keys).size).toBe(keys.length);
    // A caller that asks for the overflow child's key by name gets a child of its own, under another key.
    const roomy = new Breaker('roomy', { perKey: { maxKeys: 10 } });
    const asked = roomy.forKey(overflow.key!);
    expect(asked.key).not.toBe(overflow.key);
    expect(asked.key).toMatch(HASHED);
  });
});
