import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CallTimeoutError,
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
} from '../../lib/index.js';
import { nestApps } from '../helpers/nest-app.js';

// Registered first, so it runs last: the applications close after the real timers are back.
const start = nestApps();

describe('the default deadline under Nest', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    [
      'string',
      () => {
        class Prices {
          @CircuitBreaker({ timeoutMs: 500 })
          price(): string {
            return '12.00';
          }
        }
        return Prices;
      },
    ],
    [
      'number',
      () => {
        class Stock {
          @CircuitBreaker({ name: 'stock', timeoutMs: 500 })
          count(): number {
            return 3;
          }
        }
        return Stock;
      },
    ],
    [
      'void',
      () => {
        class Audit {
          @CircuitBreaker({ timeoutMs: 500 })
          record(): void {
            // nothing to wait for
          }
        }
        return Audit;
      },
    ],
  ])(
    'a timeoutMs on a method that returns %s fails where the class is declared, saying why',
    (returns, declare) => {
      expect(declare).toThrow(
        new TypeError(
          `@CircuitBreaker() on ${returns === 'string' ? 'Prices.price' : returns === 'number' ? 'Stock.count' : 'Audit.record'}: option "timeoutMs" can never apply, since the method returns ${returns}: a deadline only ends a call that returns a Promise or an Observable. Remove timeoutMs, or make the method async.`,
        ),
      );
    },
  );

  it('an async method with a deadline, and a synchronous one without, are fine', () => {
    expect(() => {
      class Catalog {
        @CircuitBreaker({ timeoutMs: 500 })
        async product(): Promise<string> {
          return 'cup';
        }

        @CircuitBreaker()
        label(): string {
          return 'catalog';
        }
      }
      return Catalog;
    }).not.toThrow();
  });

  it('a decorated async method gets the 10 s deadline with no option set: a hung call fails with CallTimeoutError and counts', async () => {
    vi.useFakeTimers();
    @Injectable()
    class Hanging {
      @CircuitBreaker('upstream')
      async call(): Promise<string> {
        return new Promise(() => undefined);
      }
    }
    const app = await start([CircuitBreakerModule.forRoot()], { providers: [Hanging] });
    const pending = app
      .get(Hanging)
      .call()
      .catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await pending).toBeInstanceOf(CallTimeoutError);
    expect(app.get(CircuitBreakerRegistry).get('upstream').snapshot().totals).toMatchObject({
      timeouts: 1,
      failures: { timeout: 1 },
    });
  });
});
