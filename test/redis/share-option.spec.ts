import { describe, expect, it } from 'vitest';
import {
  Breaker,
  BreakerConfigError,
  type BreakerCoordinator,
  type BreakerOptions,
} from '../../lib/core/index.js';

// The `share` option is validated by the engine like every other option, so a
// typo fails when the breaker is built, not when the fleet first needs it.
describe('breaker option "share"', () => {
  it.each<[BreakerOptions['share'], unknown]>([
    [undefined, undefined],
    [false, false],
    [true, { quorum: 'auto' }],
    [{}, { quorum: 'auto' }],
    [{ quorum: 'auto' }, { quorum: 'auto' }],
    [{ quorum: 1 }, { quorum: 1 }],
    [{ quorum: 5 }, { quorum: 5 }],
  ])('resolves %j to %j', (share, resolved) => {
    expect(new Breaker('payments', { share }).config.share).toEqual(resolved);
  });

  it.each<[unknown, string, string]>([
    [
      'yes',
      'share',
      'Circuit breaker "payments": option "share" must be true, false or { quorum }, got "yes".',
    ],
    [
      [2],
      'share',
      'Circuit breaker "payments": option "share" must be true, false or { quorum }, got an array.',
    ],
    [
      { quorum: 0 },
      'share.quorum',
      'Circuit breaker "payments": option "share.quorum" must be an integer >= 1 or \'auto\', got 0.',
    ],
    [
      { quorum: 1.5 },
      'share.quorum',
      'Circuit breaker "payments": option "share.quorum" must be an integer >= 1 or \'auto\', got 1.5.',
    ],
    [
      { quorum: 'Auto' },
      'share.quorum',
      'Circuit breaker "payments": option "share.quorum" must be an integer >= 1 or \'auto\', got "Auto".',
    ],
    [
      { quorom: 2 },
      'share.quorom',
      'Circuit breaker "payments": unknown option "share.quorom". Known options: share.quorum. Did you mean "share.quorum"?',
    ],
  ])('rejects %j, naming the breaker and the option', (share, option, message) => {
    const build = () => new Breaker('payments', { share } as BreakerOptions);
    expect(build).toThrow(BreakerConfigError);
    expect(build).toThrow(expect.objectContaining({ message, option, breakerName: 'payments' }));
  });
});

describe('snapshot().coordination', () => {
  const coordinator = (shared: boolean): BreakerCoordinator => ({
    transitioned: () => undefined,
    mayProbe: () => true,
    coordinationOf: (breaker) =>
      breaker.parent === undefined ? { shared, storeErrors: 3 } : undefined,
  });

  it('shows what the coordinator says about the breaker', () => {
    expect(
      new Breaker('shared', {}, { coordinator: coordinator(false) }).snapshot().coordination,
    ).toEqual({ shared: false, storeErrors: 3 });
  });

  it('is absent without a coordinator, and when the coordinator does not share the breaker', () => {
    expect(new Breaker('local').snapshot()).not.toHaveProperty('coordination');
    const family = new Breaker('hosts', { perKey: {} }, { coordinator: coordinator(true) });
    expect(family.snapshot().coordination).toEqual({ shared: true, storeErrors: 3 });
    expect(family.forKey('a').snapshot()).not.toHaveProperty('coordination');
  });

  it('is absent when the coordinator has no describe()', () => {
    const bare: BreakerCoordinator = { transitioned: () => undefined, mayProbe: () => true };
    expect(new Breaker('bare', {}, { coordinator: bare }).snapshot()).not.toHaveProperty(
      'coordination',
    );
  });
});
