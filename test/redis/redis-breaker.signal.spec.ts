import { describe, expect, it } from 'vitest';
import { decodeSignal, decodeStateHash } from '../../lib/redis/redis-breaker.signal.js';

describe('fleet signals and state hashes', () => {
  it('reads a signal of this version', () => {
    expect(
      decodeSignal(
        '{"v":1,"b":"GET /a","s":"open","u":1700000001000,"g":1700000000000,"o":"host:1","a":1700000000000}',
      ),
    ).toEqual({
      name: 'GET /a',
      state: 'open',
      openUntil: 1_700_000_001_000,
      generation: 1_700_000_000_000,
      origin: 'host:1',
      at: 1_700_000_000_000,
    });
  });

  it.each([
    ['not JSON', '{'],
    ['not an object', '3'],
    ['another version', '{"v":2,"b":"a","s":"open","u":1,"g":1,"o":"x","a":1}'],
    ['an unknown state', '{"v":1,"b":"a","s":"half-open","u":1,"g":1,"o":"x","a":1}'],
    ['a missing name', '{"v":1,"s":"open","u":1,"g":1,"o":"x","a":1}'],
    ['a generation that is no number', '{"v":1,"b":"a","s":"open","u":1,"g":"1","o":"x","a":1}'],
    [
      'a generation past the safe integers (1e308)',
      '{"v":1,"b":"a","s":"open","u":1,"g":1e308,"o":"x","a":1}',
    ],
    ['a generation of 2^53', '{"v":1,"b":"a","s":"open","u":1,"g":9007199254740992,"o":"x","a":1}'],
    ['a negative generation', '{"v":1,"b":"a","s":"open","u":1,"g":-1,"o":"x","a":1}'],
    [
      'an open-until past the safe integers',
      '{"v":1,"b":"a","s":"open","u":1e300,"g":1,"o":"x","a":1}',
    ],
    ['a negative time', '{"v":1,"b":"a","s":"open","u":1,"g":1,"o":"x","a":-5}'],
  ])('ignores %s', (_, message) => {
    expect(decodeSignal(message)).toBeUndefined();
  });

  it('reads a state hash, and nothing from an empty or foreign one', () => {
    expect(
      decodeStateHash('a', {
        state: 'closed',
        openUntil: '0',
        generation: '7',
        origin: 'h:2',
        at: '5',
        reason: 'x',
      }),
    ).toEqual({
      name: 'a',
      state: 'closed',
      openUntil: 0,
      generation: 7,
      origin: 'h:2',
      at: 5,
    });
    expect(decodeStateHash('a', {})).toBeUndefined();
    expect(decodeStateHash('a', { state: 'open', generation: 'many' })).toBeUndefined();
    for (const generation of ['1e308', '9007199254740992', 'inf', 'nan', '-3', '']) {
      expect(
        decodeStateHash('a', { state: 'open', openUntil: '5', generation, at: '1' }),
      ).toBeUndefined();
    }
    expect(
      decodeStateHash('a', { state: 'open', openUntil: '1e400', generation: '3', at: '1' }),
    ).toBeUndefined();
  });
});
