import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import {
  CircuitBreakerDashboardModule,
  CircuitBreakerDashboardService,
} from '../../lib/dashboard/index.js';
import { Breaker } from '../../lib/core/index.js';
import { breakerView } from '../../lib/dashboard/dashboard-views.js';
import { ManualClock } from '../helpers/manual-clock.js';

const fail = () => Promise.reject(new Error('tenant down'));

async function start(topChildren = 5) {
  const clock = new ManualClock();
  const moduleRef = await Test.createTestingModule({
    imports: [
      CircuitBreakerModule.forRoot({
        clock,
        breakers: {
          tenants: { perKey: { maxKeys: 10 }, consecutiveFailures: 2, openDurationMs: 30_000 },
        },
      }),
      CircuitBreakerDashboardModule.forRoot({ topChildren }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return {
    app,
    clock,
    tenants: app.get(CircuitBreakerRegistry).get('tenants'),
    dashboard: app.get(CircuitBreakerDashboardService),
  };
}

describe("a per-key family's tile", () => {
  it('follows its worst child: all tenants open is an open family, each child with its state, since when and next probe', async () => {
    const { app, clock, tenants, dashboard } = await start();
    try {
      const t0 = clock.now();
      for (const key of ['t1', 't2']) {
        await tenants
          .forKey(key)
          .execute(fail)
          .catch(() => undefined);
        await tenants
          .forKey(key)
          .execute(fail)
          .catch(() => undefined);
        clock.advance(1_000);
      }
      const view = dashboard.state().breakers[0]!;
      // The family's own gate is closed: its snapshot alone made the tile green.
      expect(view.snapshot.state).toBe('closed');
      expect(view.aggregate).toEqual({
        admitted: 4,
        rejected: 0,
        fallbacks: 0,
        windowCalls: 0,
        windowFailures: 0,
        windowSlowCalls: 0,
        worstState: 'open',
        worstCount: 2,
        worstSince: t0,
        openedOn: { calls: 4, failures: 4 },
        lastTransition: {
          key: 't2',
          from: 'closed',
          to: 'open',
          reason: 'consecutive-failures',
          at: t0 + 1_000,
          consecutiveFailures: 2,
        },
      });
      const opened = (at: number) => ({
        from: 'closed',
        to: 'open',
        reason: 'consecutive-failures',
        at,
        consecutiveFailures: 2,
      });
      expect(view.topChildren).toEqual([
        {
          key: 't1',
          state: 'open',
          since: t0,
          failureRate: 0,
          calls: 0,
          failures: 0,
          rejected: 0,
          retryAfterMs: 28_000,
          lastTransition: opened(t0),
        },
        {
          key: 't2',
          state: 'open',
          since: t0 + 1_000,
          failureRate: 0,
          calls: 0,
          failures: 0,
          rejected: 0,
          retryAfterMs: 29_000,
          lastTransition: opened(t0 + 1_000),
        },
      ]);
    } finally {
      await app.close();
    }
  });

  it('counts every child, listed or not, and ranks isolated over open over half-open', async () => {
    const { app, clock, tenants, dashboard } = await start(0);
    try {
      expect(dashboard.state().breakers[0]!.aggregate).toMatchObject({
        worstState: 'closed',
        worstCount: 0,
      });
      await tenants.forKey('ok').execute(() => Promise.resolve(1));
      for (const key of ['a', 'b']) {
        await tenants
          .forKey(key)
          .execute(fail)
          .catch(() => undefined);
        await tenants
          .forKey(key)
          .execute(fail)
          .catch(() => undefined);
      }
      clock.advance(30_000);
      tenants.forKey('c').force('open', { reason: 'maintenance' });
      const view = dashboard.state().breakers[0]!;
      expect(view.topChildren).toBeUndefined();
      // a and b are half-open once their open period ended; c is isolated by hand.
      expect(view.aggregate).toMatchObject({
        worstState: 'isolated',
        worstCount: 1,
        worstSince: clock.now(),
      });
    } finally {
      await app.close();
    }
  });

  it('lists the child its badge names, even when it arrives after topChildren others', async () => {
    const { app, tenants } = await start(2);
    try {
      await app.listen(0, '127.0.0.1');
      // b, a and c open on a streak of 2 failures (b after a success); d stays closed; z is forced open, last.
      await tenants.forKey('b').execute(() => Promise.resolve(1));
      for (const key of ['b', 'b', 'a', 'a', 'c', 'c'])
        await tenants
          .forKey(key)
          .execute(fail)
          .catch(() => undefined);
      for (let i = 0; i < 3; i++) await tenants.forKey('d').execute(() => Promise.resolve(1));
      tenants.forKey('z').force('open', { reason: 'maintenance' });
      const answer = await fetch(
        `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/circuit-breakers/state`,
      );
      const view = ((await answer.json()) as ReturnType<CircuitBreakerDashboardService['state']>)
        .breakers[0]!;
      expect([view.aggregate!.worstState, view.aggregate!.worstCount]).toEqual(['isolated', 1]);
      // Then an open child: a streak of 2 is an opening on 2 failed calls for each of them.
      const [first, second] = view.topChildren!.map(({ key, state }) => `${key}:${state}`);
      expect(first).toBe('z:isolated');
      expect(['a:open', 'b:open', 'c:open']).toContain(second);
    } finally {
      await app.close();
    }
  });

  it("lists the worst states first, the badge's own first of all, whatever the order children come in (seed 2603)", async () => {
    const SEVERITY: Record<string, number> = {
      closed: 0,
      disabled: 1,
      'half-open': 2,
      open: 3,
      isolated: 4,
    };
    const run = (outcomes: readonly ('ok' | 'fail')[]) => async (child: Breaker) => {
      for (const outcome of outcomes)
        await child
          .execute(() => (outcome === 'ok' ? Promise.resolve(1) : fail()))
          .catch(() => undefined);
    };
    const actions = {
      open: run(['fail', 'fail']),
      openAfterSuccess: run(['ok', 'fail', 'fail']),
      healthy: run(['ok']),
      failing: run(['ok', 'fail']),
      forced: async (child: Breaker) => child.force('open', { reason: 'maintenance' }),
      disabled: async (child: Breaker) => child.force('disabled', { reason: 'maintenance' }),
    };
    const action = fc.constantFrom(...(Object.keys(actions) as (keyof typeof actions)[]));
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        async (children, topChildren) => {
          const family = new Breaker(
            'tenants',
            { perKey: { maxKeys: 20 }, consecutiveFailures: 2, openDurationMs: 30_000 },
            { clock: new ManualClock() },
          );
          for (const [at, name] of children.entries()) await actions[name](family.forKey(`k${at}`));
          const view = breakerView(family, topChildren);
          const listed = view.topChildren!.map((child) => SEVERITY[child.state]!);
          const all = [...family.children()].map((child) => SEVERITY[child.snapshot().state]!);
          expect(view.topChildren![0]!.state).toBe(view.aggregate!.worstState);
          // The worst states of all, in order: what is left out is no worse than what is listed.
          expect(listed).toEqual(all.sort((a, b) => b - a).slice(0, topChildren));
        },
      ),
      { seed: 2603, numRuns: 100 },
    );
  });
});
