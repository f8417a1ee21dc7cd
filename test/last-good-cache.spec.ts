import { describe, expect, it } from 'vitest';
import { LastGoodCache } from '../lib/fallback/last-good-cache.js';

describe('LastGoodCache', () => {
  it('serves a value up to maxAgeMs old, then drops it', () => {
    const cache = new LastGoodCache(1_000, 10);
    cache.store('a', 'value', 0);
    expect(cache.lookup('a', 1_000)?.value).toBe('value');
    expect(cache.lookup('a', 1_001)).toBeUndefined();
    expect(cache.lookup('a', 0)).toBeUndefined(); // dropped when found stale
  });

  it('keeps at most maxEntries, dropping the least recently stored', () => {
    const cache = new LastGoodCache(1_000, 2);
    cache.store('a', 1, 0);
    cache.store('b', 2, 0);
    cache.store('a', 3, 0); // stored again: now the most recent
    cache.store('c', 4, 0);
    expect(cache.lookup('b', 0)).toBeUndefined();
    expect(cache.lookup('a', 0)?.value).toBe(3);
    expect(cache.lookup('c', 0)?.value).toBe(4);
  });
});
