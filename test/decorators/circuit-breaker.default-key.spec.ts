import { Injectable, Logger } from '@nestjs/common';
import { firstValueFrom, of } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CircuitBreaker,
  circuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  DEFAULT_CIRCUIT_KEY,
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

  it('a decorated method whose key function returns undefined or "" runs under DEFAULT_CIRCUIT_KEY', async () => {
    const { inventory, family, errors } = await started();
    expect(await inventory.stock()).toBe('stock of the default warehouse');
    expect(await inventory.stock('')).toBe('stock of ');
    expect(await inventory.stock('north')).toBe('stock of north');
    expect(family.forKey(DEFAULT_CIRCUIT_KEY).snapshot().totals.successes).toBe(2);
    expect(family.forKey('north').snapshot().totals.successes).toBe(1);
    expect(errors).not.toHaveBeenCalled();
  });

  it('a key function that throws is reported once, and its calls run under the default key', async () => {
    const { inventory, family, errors } = await started();
    expect(await inventory.stockAnywhere()).toBe('stock');
    expect(await inventory.stockAnywhere()).toBe('stock');
    expect(family.forKey(DEFAULT_CIRCUIT_KEY).snapshot().totals.successes).toBe(2);
    expect(errors.mock.calls.map(([message]) => message)).toEqual([
      'Circuit breaker "warehouses": its key function threw Error: no warehouse resolver; the call went on under the default key "default". Make the key function return the target\'s key, or undefined when there is none. Later faults of this key function are not reported again.',
    ]);
  });

  it('the operator: undefined is the default key; a number is reported once and goes there too', async () => {
    const { family, errors } = await started();
    expect(
      await firstValueFrom(of('a').pipe(circuitBreaker(family, { key: () => undefined }))),
    ).toBe('a');
    const numeric = circuitBreaker(family, { key: () => 7 as unknown as string });
    expect(await firstValueFrom(of('b').pipe(numeric))).toBe('b');
    expect(await firstValueFrom(of('c').pipe(numeric))).toBe('c');
    expect(family.forKey(DEFAULT_CIRCUIT_KEY).snapshot().totals.successes).toBe(3);
    expect(errors.mock.calls.map(([message]) => message)).toEqual([
      'Circuit breaker "warehouses": its key function returned 7, not a string; the call went on under the default key "default". Return the target\'s key as a string, or undefined when there is none. Later faults of this key function are not reported again.',
    ]);
  });
});
