// This package's rows, built from the engine it is given (`dist/core` for the
// benchmark, `lib/core` for the tests), each breaker on the simulation's clock.

import { FleetCoordinator } from './fleet.mjs';

/** The rows of this package: its defaults, and its recovery options where a scenario names them. */
export function oursImplementations(core) {
  const { Breaker, withRetry } = core;
  const make = (label, options, extra = {}) => ({
    name: extra.name,
    label,
    make: ({ time, dependency, random, attempts }) => {
      const resolved = typeof options === 'function' ? options(dependency) : options;
      const breaker = new Breaker('dependency', resolved, { clock: time.clock, random });
      if (extra.retry) {
        const retrying = withRetry(breaker, { attempts });
        return { retries: true, call: (fn) => retrying.execute(({ signal }) => fn(signal)) };
      }
      return { call: (fn) => breaker.execute(({ signal }) => fn(signal)) };
    },
  });
  return {
    ours: make('this package, defaults', undefined, { name: 'ours' }),
    // The previous defaults (open 30 s, deadline 10 s, the rate rule alone), to compare with.
    oursPrevious: make(
      'this package, previous defaults (openDurationMs 30000, timeoutMs 10000, consecutiveFailures false)',
      { openDurationMs: 30_000, timeoutMs: 10_000, consecutiveFailures: false },
      { name: 'oursPrevious' },
    ),
    oursRampUp: make(
      'this package + rampUp { durationMs: 30000 }',
      { rampUp: { durationMs: 30_000 } },
      {
        name: 'oursRampUp',
      },
    ),
    oursHealthCheck: make(
      'this package + healthCheck { fn: health check, intervalMs: 2000 }',
      (dependency) => ({
        healthCheck: { fn: () => dependency.health(), intervalMs: 2_000 },
      }),
      { name: 'oursHealthCheck' },
    ),
    oursRetry: make('this package + withRetry (default budget)', undefined, {
      name: 'oursRetry',
      retry: true,
    }),
    // Scenario 8: one family, a child per host (perKey is what makes it a family; the rest is defaults).
    oursPerKey: {
      name: 'oursPerKey',
      label: 'this package, defaults, perKey: {} (a child per host)',
      make: () => {
        throw new Error('oursPerKey is for scenarios with several hosts');
      },
      makeKeyed: ({ time, random }) => {
        const family = new Breaker('dependency', { perKey: {} }, { clock: time.clock, random });
        const children = new Map();
        const child = (key) => {
          let breaker = children.get(key);
          if (breaker === undefined) children.set(key, (breaker = family.forKey(`host-${key}`)));
          return breaker;
        };
        return { call: (fn, key) => child(key).execute(({ signal }) => fn(signal)) };
      },
    },
    // Scenario 9: every replica's breaker shares through a coordinator modelled in virtual time (bench/protection/fleet.mjs).
    oursShared: {
      name: 'oursShared',
      label: 'this package, defaults, shared state (quorum auto: 2 of 10)',
      make: () => {
        throw new Error('oursShared is for scenarios with several replicas');
      },
      makeKeyed: ({ time, randomFor }, keys) => {
        const coordinator = new FleetCoordinator();
        const replicas = Array.from({ length: keys }, (_, k) =>
          coordinator.join(
            new Breaker('dependency', undefined, {
              clock: time.clock,
              random: randomFor(k),
              coordinator,
            }),
          ),
        );
        return { call: (fn, key) => replicas[key].execute(({ signal }) => fn(signal)) };
      },
    },
  };
}
