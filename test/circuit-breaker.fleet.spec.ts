import { describe, expect, it } from 'vitest';
import { type BreakerStore, CircuitBreakerModule, CircuitBreakerRegistry } from '../lib/index.js';
import { fleetOf } from '../lib/circuit-breaker.fleet.js';
import { nestApps } from './helpers/nest-app.js';

// The registry's { fleet: true } orders without a store that carries them:
// a rejection that says what to do, and nothing changes on this replica.

const ORDER = { reason: 'maintenance' };

describe('CircuitBreakerRegistry.control(): { fleet: true } without a fleet store, and mistakes', () => {
  const start = nestApps();

  it('rejects force, release and reconfigure, naming the breaker and the fix, and changes nothing', async () => {
    const app = await start([CircuitBreakerModule.forRoot({ breakers: { payments: {} } })]);
    const registry = app.get(CircuitBreakerRegistry);
    const needs = (method: string) =>
      `CircuitBreakerRegistry.control("payments", { fleet: true }).${method}() needs a store that carries orders to every replica, and the module has none that does. ` +
      `Give CircuitBreakerModule.forRoot() a store (new RedisBreakerStore({ redis }) from 'nestjs-circuit-breaker/redis'), or use control("payments") without { fleet: true } to act on this replica only.`;
    const fleet = registry.control('payments', { fleet: true });
    await expect(fleet.force('open', ORDER)).rejects.toThrow(needs('force'));
    await expect(fleet.release()).rejects.toThrow(needs('release'));
    await expect(fleet.reconfigure({ timeoutMs: 1_000 })).rejects.toThrow(needs('reconfigure'));
    expect(registry.get('payments').snapshot().forced).toBeUndefined();
    expect(registry.get('payments').config.timeoutMs).toBe(2_000);
    // { fleet: false } is this replica, as leaving it out is.
    await registry.control('payments', { fleet: false }).force('open', ORDER);
    expect(registry.get('payments').state).toBe('isolated');
    await registry.control('payments').release();
    expect(registry.get('payments').state).toBe('closed');
  });

  it('makes every mistake of manual control a rejection, never a throw, here as on the fleet', async () => {
    const app = await start([CircuitBreakerModule.forRoot({ breakers: { payments: {} } })]);
    const registry = app.get(CircuitBreakerRegistry);
    const settled = async (order: () => Promise<unknown>) => {
      let promise: Promise<unknown> | undefined;
      expect(() => (promise = order())).not.toThrow();
      return promise!.then(
        () => 'resolved',
        (error: Error) => error.message,
      );
    };
    expect(await settled(() => registry.control('paymnets').force('open', ORDER))).toMatch(
      /^No circuit breaker named "paymnets"\. Known breakers: "payments"/,
    );
    expect(
      await settled(() => registry.control('payments').force('closd' as never, ORDER)),
    ).toMatch(/"closd"/);
    expect(
      await settled(() =>
        registry.control('payments').force('open', { reason: 'x', until: 1 } as never),
      ),
    ).toMatch(/until/);
    expect(
      await settled(() => registry.control('payments').reconfigure({ timeoutMs: -1 })),
    ).toMatch(
      /^Circuit breaker "payments" in CircuitBreakerRegistry\.control\(\)\.reconfigure\(\): option "timeoutMs"/,
    );
    expect(
      await settled(() =>
        registry.control('payments', { fleet: 1 } as unknown as { fleet: true }).release(),
      ),
    ).toBe(
      'CircuitBreakerRegistry.control("payments", scope): the scope must be { fleet: true } (every replica) or left out (this replica), got an object.',
    );
    expect(registry.get('payments').snapshot().forced).toBeUndefined();
    expect(registry.get('payments').config.timeoutMs).toBe(2_000);
    await expect(
      registry.control('payments').reconfigure({ timeoutMs: 1_000 }),
    ).resolves.toMatchObject({
      previous: { timeoutMs: 2_000 },
      current: { timeoutMs: 1_000 },
    });
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
