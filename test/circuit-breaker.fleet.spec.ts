import { describe, expect, it } from 'vitest';
import { type BreakerStore, CircuitBreakerModule, CircuitBreakerRegistry } from '../lib/index.js';
import { fleetOf } from '../lib/circuit-breaker.fleet.js';
import { nestApps } from './helpers/nest-app.js';

// The registry's { fleet: true } orders without a store that carries them:
// a rejection that says what to do, and nothing changes on this replica.

const ORDER = { reason: 'maintenance' };

describe('CircuitBreakerRegistry: { fleet: true } without a fleet store', () => {
  const start = nestApps();

  it('rejects force, release and reconfigure, naming the breaker and the fix, and changes nothing', async () => {
    const app = await start([CircuitBreakerModule.forRoot({ breakers: { payments: {} } })]);
    const registry = app.get(CircuitBreakerRegistry);
    const needs = (method: string) =>
      `CircuitBreakerRegistry.${method}("payments", ..., { fleet: true }) needs a store that carries orders to every replica, and the module has none that does. ` +
      "Give CircuitBreakerModule.forRoot() a store (new RedisBreakerStore({ redis }) from 'nestjs-circuit-breaker/redis'), or call it without { fleet: true } to act on this replica only.";
    await expect(registry.force('payments', 'open', ORDER, { fleet: true })).rejects.toThrow(
      needs('force'),
    );
    await expect(registry.release('payments', { fleet: true })).rejects.toThrow(needs('release'));
    await expect(
      registry.reconfigure('payments', { timeoutMs: 1_000 }, { fleet: true }),
    ).rejects.toThrow(needs('reconfigure'));
    expect(registry.get('payments').snapshot().forced).toBeUndefined();
    expect(registry.get('payments').config.timeoutMs).toBe(10_000);
    // { fleet: false } is this replica, as leaving it out is.
    registry.force('payments', 'open', ORDER, { fleet: false });
    expect(registry.get('payments').state).toBe('isolated');
    registry.release('payments');
    expect(registry.get('payments').state).toBe('closed');
  });

  it('knows a fleet store by its shape only, and a store without every order is none', () => {
    const fn = () => Promise.resolve();
    const base: BreakerStore = {
      coordinator: { transitioned: () => undefined, mayProbe: () => true },
      hydrate: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    const fleet = { force: fn, release: fn, reconfigure: fn, useReconfigurer: () => undefined };
    expect(fleetOf(undefined)).toBeUndefined();
    expect(fleetOf(base)).toBeUndefined();
    expect(fleetOf({ ...base, fleet: { ...fleet, release: undefined } } as BreakerStore)).toBe(
      undefined,
    );
    expect(fleetOf({ ...base, fleet } as BreakerStore)).toBe(fleet);
  });
});
