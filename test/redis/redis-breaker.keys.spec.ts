import { describe, expect, it } from 'vitest';
import { breakerKeys, channelOf, escapeKeyPart } from '../../lib/redis/redis-breaker.keys.js';

describe('breaker names in Redis keys', () => {
  it.each([
    ['payments', 'payments'],
    ['payments-v2.eu_west', 'payments-v2.eu_west'],
    ['GET /orders/:id', 'GET%20%2Forders%2F%3Aid'],
    ['{tag}', '%7Btag%7D'],
    ['*?[]', '%2A%3F%5B%5D'],
    ['100%', '100%25'],
    ['zahlungsdienst-ü', 'zahlungsdienst-%C3%BC'],
    ['\uD800', '%uD800'],
  ])('escapes %j as %j', (name, escaped) => {
    expect(escapeKeyPart(name)).toBe(escaped);
  });

  it('never gives two names the same key, even names that look like escapes', () => {
    const names = [
      'a b',
      'a%20b',
      'a%2520b',
      'a:b',
      'a%3Ab',
      '\uD800',
      '%uD800',
      'ü',
      '%C3%BC',
      '\uD83D\uDE00',
      '\uD83D',
    ];
    expect(new Set(names.map(escapeKeyPart)).size).toBe(names.length);
  });

  it('keeps the keys of a breaker in one Redis Cluster slot with a hash tag of the escaped name, under the prefix', () => {
    expect(breakerKeys('shop:', 'GET /a')).toEqual({
      state: 'shop:{GET%20%2Fa}:state',
      opens: 'shop:{GET%20%2Fa}:opens',
      probe: 'shop:{GET%20%2Fa}:probe',
      force: 'shop:{GET%20%2Fa}:force',
      config: 'shop:{GET%20%2Fa}:config',
    });
    expect(channelOf('shop:')).toBe('shop:signals');
  });
});
