import { describe, expect, it } from 'vitest';
import { firstValueFrom, take, toArray } from 'rxjs';
import { CircuitBreakerRegistry, type CircuitBreakerEvent } from '../lib/index.js';
import { mergeOptions } from '../lib/circuit-breaker.options.js';
import { CountingClock } from './helpers/counting-clock.js';
import { ManualClock } from './helpers/manual-clock.js';
import { standaloneRegistry } from './helpers/standalone-registry.js';

describe('CircuitBreakerRegistry', () => {
  it('refuses every use, naming the fix, when built with `new` outside a module', () => {
    const registry = new CircuitBreakerRegistry();
    expect(() => registry.getOrCreate('payments')).toThrow(
      'This CircuitBreakerRegistry has no orchestrator: it was created with `new`, outside a Nest module. Get the registry from CircuitBreakerModule.forRoot() (or CircuitBreakerTestingModule.forRoot() in tests).',
    );
  });

  it('get() throws a clear error naming the known breakers', () => {
    const { registry } = standaloneRegistry({ breakers: { payments: {}, shipping: {} } });
    expect(() => registry.get('paymnets')).toThrow(
      'No circuit breaker named "paymnets". Known breakers: "payments", "shipping". Define it in CircuitBreakerModule.forRoot({ breakers }) or forFeature(), or use getOrCreate().',
    );
    expect(registry.has('payments')).toBe(true);
    expect(registry.has('paymnets')).toBe(false);
  });

  it('getOrCreate() builds unknown names from the defaults, once', () => {
    const { registry } = standaloneRegistry({ defaults: { openDurationMs: 7_000 } });
    const created = registry.getOrCreate('search');
    expect(created.config.openDurationMs).toBe(7_000);
    expect(registry.getOrCreate('search')).toBe(created);
    expect(registry.list()).toEqual(['search']);
  });

  it('getOrCreate() under strict refuses unknown names', () => {
    const { registry } = standaloneRegistry({ strict: true, breakers: { payments: {} } });
    expect(registry.getOrCreate('payments')).toBe(registry.get('payments'));
    expect(() => registry.getOrCreate('search')).toThrow(
      'Circuit breaker "search" used by CircuitBreakerRegistry.getOrCreate() is not defined, and CircuitBreakerModule is strict.',
    );
  });

  it('getOrCreate() with options for a breaker configured elsewhere is a conflict', () => {
    const { registry } = standaloneRegistry({ breakers: { payments: {} } });
    expect(() => registry.getOrCreate('payments', { timeoutMs: 10 })).toThrow(
      'Circuit breaker "payments" has options set in two places: CircuitBreakerModule.forRoot({ breakers }) and CircuitBreakerRegistry.getOrCreate().',
    );
  });

  it('snapshot() reports every breaker in creation order', () => {
    const { registry } = standaloneRegistry({ breakers: { a: {}, b: {} } });
    registry.get('b').isolate();
    expect(registry.snapshot().map((s) => [s.name, s.state])).toEqual([
      ['a', 'closed'],
      ['b', 'isolated'],
    ]);
  });

  it('events$ tags every event with its breaker, including breakers created later, and only listens while subscribed', async () => {
    const clock = new CountingClock();
    const { registry } = standaloneRegistry({ clock, defaults: { consecutiveFailures: 1 } });
    const a = registry.getOrCreate('a');
    const seen = firstValueFrom(registry.events$.pipe(take(3), toArray()));
    const b = registry.getOrCreate('b');
    await a.execute(() => 1);
    await b.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    const events = (await seen) as CircuitBreakerEvent[];
    expect(events.map((e) => [e.breaker, e.type])).toEqual([
      ['a', 'success'],
      ['b', 'failure'],
      ['b', 'stateChange'],
    ]);
    expect(events[2]!.payload).toEqual({
      from: 'closed',
      to: 'open',
      reason: 'consecutive-failures',
      at: clock.now(),
      openUntil: clock.now() + 10_000,
      consecutiveFailures: 1,
    });
    // The subscription ended with take(3): the breakers are no longer listened to, so their calls are no longer timed.
    expect(await clock.readsDuring(() => a.execute(() => 1))).toBe(0);
  });

  it('completes events$ and disposes breakers on shutdown', async () => {
    const { registry, orchestrator } = standaloneRegistry({ breakers: { a: {} } });
    let completed = false;
    registry.events$.subscribe({ complete: () => (completed = true) });
    await orchestrator.onApplicationShutdown();
    expect(completed).toBe(true);
  });

  it('merges a breaker options over the defaults, nested objects too', () => {
    expect(
      mergeOptions(
        {
          openDurationMs: 1,
          halfOpen: { maxProbes: 3 },
          backoff: { multiplier: 2 },
          overload: { k: 3 },
        },
        { halfOpen: { successesToClose: 2 }, backoff: { maxMs: 10 } },
      ),
    ).toEqual({
      openDurationMs: 1,
      halfOpen: { maxProbes: 3, successesToClose: 2 },
      backoff: { multiplier: 2, maxMs: 10 },
      overload: { k: 3 },
    });
    expect(mergeOptions({ overload: { k: 3 } }, { overload: false })).toEqual({ overload: false });
    expect(mergeOptions(undefined, { timeoutMs: 5 })).toEqual({ timeoutMs: 5 });
  });

  it('keeps nested options that are not objects for validation to reject, even over defaults', () => {
    expect(mergeOptions({ halfOpen: { maxProbes: 2 } }, { halfOpen: 5 as never })).toEqual({
      halfOpen: 5,
    });
  });
});

describe('CircuitBreakerRegistry with per-key families', () => {
  it('events$ carries children events tagged with the family name and the key', async () => {
    const { registry } = standaloneRegistry({
      breakers: { upstreams: { perKey: { maxKeys: 10 } } },
    });
    const family = registry.get('upstreams');
    await family.forKey('existing').execute(() => 1);
    const seen: CircuitBreakerEvent[] = [];
    const subscription = registry.events$.subscribe((e) => seen.push(e));
    await family.forKey('existing').execute(() => 2);
    await family.forKey('new').execute(() => 3);
    subscription.unsubscribe();
    await family.forKey('new').execute(() => 4);
    expect(seen.map((e) => [e.breaker, e.key, e.type])).toEqual([
      ['upstreams', 'existing', 'success'],
      ['upstreams', 'new', 'success'],
    ]);
  });
});

describe('events of a per-key family', () => {
  it('a family probe is reported once, by the child that made it', async () => {
    const clock = new ManualClock();
    const { registry } = standaloneRegistry({
      clock,
      breakers: {
        inv: {
          perKey: { maxKeys: 10 },
          aggregate: { openWhenOpenRatio: 0.5, minKeys: 2 },
          consecutiveFailures: 1,
          openDurationMs: 100,
        },
      },
    });
    const family = registry.get('inv');
    await family
      .forKey('a')
      .execute(() => Promise.reject(new Error('x')))
      .catch(() => undefined);
    await family
      .forKey('b')
      .execute(() => Promise.reject(new Error('x')))
      .catch(() => undefined);
    clock.advance(100);
    const seen: string[] = [];
    const subscription = registry.events$.subscribe((e) =>
      seen.push(`${e.key ?? '(family)'} ${e.type}`),
    );
    await family.forKey('c').execute(() => 'ok');
    subscription.unsubscribe();
    expect(seen.filter((e) => e.endsWith(' success'))).toEqual(['c success']);
    expect(seen).toContain('(family) probe');
  });
});
