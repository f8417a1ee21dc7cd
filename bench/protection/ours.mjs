// This package's rows, built from the engine it is given (`dist/core` for the
// benchmark, `lib/core` for the tests), each breaker on the simulation's clock.

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
    oursRampUp: make(
      'this package + rampUp { durationMs: 30000 }',
      { rampUp: { durationMs: 30_000 } },
      {
        name: 'oursRampUp',
      },
    ),
    oursProbe: make(
      'this package + probe { fn: health check, intervalMs: 2000 }',
      (dependency) => ({
        probe: { fn: () => dependency.health(), intervalMs: 2_000 },
      }),
      { name: 'oursProbe' },
    ),
    oursRetry: make('this package + withRetry (default budget)', undefined, {
      name: 'oursRetry',
      retry: true,
    }),
  };
}
