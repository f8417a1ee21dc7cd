/**
 * What a per-key family keeps of its keys: a copy of its own, never the string
 * the caller passed. V8 keeps the whole parent of a sliced string alive, so a
 * bounded long key built with `slice()`, or a short key cut from a request
 * body, held its whole source in memory for as long as its child lived.
 * Measured on the heap after garbage collection (`gc` exposed for this file).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap growth (bytes) left by `grow`, after full collections on both sides. */
const heapGrowth = (grow: () => void): number => {
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  grow();
  gc();
  gc();
  return process.memoryUsage().heapUsed - before;
};

/** A distinct string of `units` two-byte code units (2 bytes each on the heap). */
const source = (i: number, units: number) =>
  `${String.fromCharCode(0x4e00 + i)}${'字'.repeat(units - 1)}`;

const MB = 1024 * 1024;

describe('per-key family: memory held per key', () => {
  it('100 long keys (128 KB each) leave their bounded form only: the heap grows by less than 2 MB', () => {
    const family = new Breaker('tenants', { perKey: { maxKeys: 200 } });
    const growth = heapGrowth(() => {
      for (let i = 0; i < 100; i++) family.forKey(source(i, 64 * 1024));
    });
    // Before: each bounded key was a slice of its key, and kept all of it (12.5 MB).
    expect(growth).toBeLessThan(2 * MB);
    expect(family.snapshot().family).toMatchObject({ keys: 100 });
    const child = family.forKey(source(7, 64 * 1024));
    expect(child.key).toHaveLength(256);
    expect(child.key!.startsWith(`…${String.fromCharCode(0x4e00 + 7)}字`)).toBe(true);
  });

  it('100 short keys cut from 256 KB bodies keep only their own characters', () => {
    const family = new Breaker('bodies', { perKey: { maxKeys: 200 } });
    const growth = heapGrowth(() => {
      for (let i = 0; i < 100; i++) family.forKey(source(i, 128 * 1024).slice(0, 100));
    });
    // Before: each key kept its whole body alive (25 MB).
    expect(growth).toBeLessThan(2 * MB);
    const key = source(3, 128 * 1024).slice(0, 100);
    expect(family.forKey(key).key).toBe(key);
    expect(family.snapshot().family).toMatchObject({ keys: 100 });
  });
});
