import { Injectable, Logger } from '@nestjs/common';
import { firstValueFrom, of } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CircuitBreaker,
  circuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  FAMILY_DEFAULT_KEY,
} from '../../lib/index.js';
import { nestApps } from '../helpers/nest-app.js';

const startApp = nestApps();

@Injectable()
class Inventory {
  @CircuitBreaker({ name: 'warehouses', key: (warehouse?: string) => warehouse })
  async stock(warehouse?: string): Promise<string> {
    return `stock of ${warehouse ?? 'the default warehouse'}`;
  }

  @CircuitBreaker({
    name: 'warehouses',
    key: (): string => {
      throw new Error('no warehouse resolver');
    },
  })
  async stockAnywhere(): Promise<string> {
    return 'stock';
  }

  @CircuitBreaker({
    name: 'warehouses',
    key: (): string => {
      throw new RangeError('no region resolver');
    },
  })
  async stockInRegion(): Promise<string> {
    return 'regional stock';
  }
}

describe('the default key of @CircuitBreaker() and circuitBreaker()', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function started() {
    const errors = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const app = await startApp(
      [CircuitBreakerModule.forRoot({ breakers: { warehouses: { perKey: { maxKeys: 10 } } } })],
      { providers: [Inventory] },
    );
    const family = app.get(CircuitBreakerRegistry).get('warehouses');
    return { inventory: app.get(Inventory), family, errors };
  }

  it('a decorated method whose key function returns undefined or "" runs under FAMILY_DEFAULT_KEY', async () => {
    const { inventory, family, errors } = await started();
    expect(await inventory.stock()).toBe('stock of the default warehouse');
    expect(await inventory.stock('')).toBe('stock of ');
    expect(await inventory.stock('north')).toBe('stock of north');
    expect(family.forKey(FAMILY_DEFAULT_KEY).snapshot().totals.successes).toBe(2);
    expect(family.forKey('north').snapshot().totals.successes).toBe(1);
    expect(errors).not.toHaveBeenCalled();
  });

  it('a key function that throws is reported once per site, and its calls run under the default key', async () => {
    const { inventory, family, errors } = await started();
    expect(await inventory.stockAnywhere()).toBe('stock');
    expect(await inventory.stockAnywhere()).toBe('stock');
    // Another site of the same per-key breaker, with a bug of its own: reported too.
    expect(await inventory.stockInRegion()).toBe('regional stock');
    expect(await inventory.stockInRegion()).toBe('regional stock');
    expect(family.forKey(FAMILY_DEFAULT_KEY).snapshot().totals.successes).toBe(4);
    expect(errors.mock.calls.map(([message]) => message)).toEqual([
      `Circuit breaker "warehouses" in @CircuitBreaker() on Inventory.stockAnywhere: option "key" threw Error: no warehouse resolver; the call went on under the default key "${FAMILY_DEFAULT_KEY}". Make the key function return the target's key, or undefined when there is none. Later errors of this site's key function are not reported again.`,
      `Circuit breaker "warehouses" in @CircuitBreaker() on Inventory.stockInRegion: option "key" threw RangeError: no region resolver; the call went on under the default key "${FAMILY_DEFAULT_KEY}". Make the key function return the target's key, or undefined when there is none. Later errors of this site's key function are not reported again.`,
    ]);
  });

  it('a tenant named "default" is a key like any other, apart from the default key', async () => {
    const { inventory, family } = await started();
    expect(FAMILY_DEFAULT_KEY).not.toBe('default');
    expect(await inventory.stock('default')).toBe('stock of default');
    expect(await inventory.stock()).toBe('stock of the default warehouse');
    expect(await inventory.stock()).toBe('stock of the default warehouse');
    expect(family.forKey('default').snapshot().totals.successes).toBe(1);
    expect(family.forKey(FAMILY_DEFAULT_KEY).snapshot().totals.successes).toBe(2);
    expect(family.forKey('default')).not.toBe(family.forKey(FAMILY_DEFAULT_KEY));
    // Stored as it is, unlike other keys that begin with the mark: metrics and the dashboard read `…default`.
    expect(FAMILY_DEFAULT_KEY).toBe('\u2026default');
    expect(family.forKey(FAMILY_DEFAULT_KEY).key).toBe(FAMILY_DEFAULT_KEY);
    expect(family.forKey('\u2026defaults').key).not.toBe('\u2026defaults');
  });

  it('the operator: undefined is the default key, a finite number its string; anything else is reported once', async () => {
    const { family, errors } = await started();
    expect(
      await firstValueFrom(of('a').pipe(circuitBreaker(family, { key: () => undefined }))),
    ).toBe('a');
    const numeric = circuitBreaker(family, { key: () => 7 as unknown as string });
    expect(await firstValueFrom(of('b').pipe(numeric))).toBe('b');
    expect(family.forKey('7').snapshot().totals.successes).toBe(1);
    const notANumber = circuitBreaker(family, { key: () => Number.NaN as unknown as string });
    expect(await firstValueFrom(of('c').pipe(notANumber))).toBe('c');
    expect(await firstValueFrom(of('d').pipe(notANumber))).toBe('d');
    expect(family.forKey(FAMILY_DEFAULT_KEY).snapshot().totals.successes).toBe(3);
    expect(errors.mock.calls.map(([message]) => message)).toEqual([
      `Circuit breaker "warehouses" in circuitBreaker(): option "key" returned NaN, not a string; the call went on under the default key "${FAMILY_DEFAULT_KEY}". Return the target's key as a string, or undefined when there is none. Later errors of this site's key function are not reported again.`,
    ]);
  });
});
