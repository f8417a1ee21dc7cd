import { describe, expect, it } from 'vitest';
import { BreakerConfigError, CircuitBreakerModule, CircuitBreakerRegistry } from '../lib/index.js';
import { nestApps } from './helpers/nest-app.js';

const start = nestApps();

async function registryOf() {
  const app = await start([
    CircuitBreakerModule.forRoot({
      logging: false,
      defaults: { openDurationMs: 20_000 },
      breakers: { payments: { timeoutMs: 2_000, consecutiveFailures: 1 }, search: {}, legacy: {} },
    }),
  ]);
  return app.get(CircuitBreakerRegistry);
}

describe('CircuitBreakerRegistry.reload()', () => {
  it('adds, reconfigures and reports: state kept, nothing dropped', async () => {
    const registry = await registryOf();
    const adhoc = registry.getOrCreate('adhoc', { timeoutMs: 500 });
    await registry
      .get('payments')
      .execute(() => Promise.reject(new Error('down')))
      .catch(() => undefined);
    const result = registry.reload({
      defaults: { openDurationMs: 40_000 },
      breakers: {
        payments: { timeoutMs: 1_000, consecutiveFailures: 1 },
        search: {},
        inventory: { timeoutMs: 300 },
      },
    });
    expect(result).toEqual({
      added: ['inventory'],
      reconfigured: ['payments', 'search', 'legacy', 'adhoc'],
      unchanged: [],
      notInTree: ['legacy'],
    });
    expect([
      registry.get('payments').state,
      registry.get('payments').config.timeoutMs,
      registry.get('payments').config.openDurationMs,
    ]).toEqual(['open', 1_000, 40_000]);
    expect([
      registry.get('inventory').config.timeoutMs,
      registry.get('legacy').config.openDurationMs,
      adhoc.config.timeoutMs,
      adhoc.config.openDurationMs,
    ]).toEqual([300, 40_000, 500, 40_000]);
    expect(
      registry.reload({
        defaults: { openDurationMs: 40_000 },
        breakers: { payments: { timeoutMs: 1_000, consecutiveFailures: 1 } },
      }),
    ).toEqual({
      added: [],
      reconfigured: [],
      unchanged: ['payments', 'search', 'legacy', 'adhoc', 'inventory'],
      notInTree: ['search', 'legacy', 'inventory'],
    });
  });

  it('refuses the whole tree when any breaker is invalid, listing every error, and changes nothing', async () => {
    const registry = await registryOf();
    let error: unknown;
    try {
      registry.reload({
        defaults: { openDurationMs: 10_000 },
        breakers: { payments: { timeoutMs: -1 }, search: { failureRateThreshold: 2 }, fresh: {} },
      });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(BreakerConfigError);
    expect((error as Error).message).toBe(
      [
        'CircuitBreakerRegistry.reload() refused the whole tree; nothing changed. 2 errors:',
        '- Circuit breaker "payments" in CircuitBreakerRegistry.reload(): option "breakers.payments.timeoutMs" must be a positive number of milliseconds up to 2147483647, or false for no deadline, got -1.',
        '- Circuit breaker "search" in CircuitBreakerRegistry.reload(): option "breakers.search.failureRateThreshold" must be a number in (0, 1], got 2.',
        'Fix them and reload again.',
      ].join('\n'),
    );
    expect([
      registry.has('fresh'),
      registry.get('payments').config.timeoutMs,
      registry.get('search').config.openDurationMs,
    ]).toEqual([false, 2_000, 20_000]);
  });

  it('refuses a tree that changes what cannot change at run time', async () => {
    const registry = await registryOf();
    expect(() => registry.reload({ breakers: { payments: { perKey: { maxKeys: 5 } } } })).toThrow(
      'option "perKey" cannot change while the application runs',
    );
    expect(() => registry.reload([] as never)).toThrow('CircuitBreakerRegistry.reload(): option');
  });
});
