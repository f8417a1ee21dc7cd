// The rows of the limit benchmark: this package's ConcurrencyLimiter from the
// engine it is given (`dist/core` for the benchmark, `lib/core` for the tests),
// on the simulation's clock, in front of the server; and no limit.

/** No limit: every request goes to the server's own queue. */
export const noLimit = {
  name: 'none',
  label: 'no limit',
  options: undefined,
  make: () => undefined,
};

/** A row of `core.ConcurrencyLimiter` with `options`. */
export function limiterRow(core, name, label, options) {
  return {
    name,
    label,
    options,
    make: ({ clock }) => new core.ConcurrencyLimiter('server', options, { clock }),
  };
}

/**
 * The adaptive algorithms `core` has: 'aimd', and 'gradient' once it is more than a name for
 * AIMD (until it lands, the options accept it and build AIMD). The probe: 20 requests at once
 * whose latency rises tenfold; AIMD hears only drops and grows, a gradient limit shrinks.
 */
export function adaptiveAlgorithms(core) {
  const limitAfter = (algorithm) => {
    let now = 0;
    const clock = { now: () => now, monotonic: () => now, setTimer: () => () => {} };
    const limiter = new core.ConcurrencyLimiter('probe', { algorithm }, { clock });
    for (let round = 0; round < 50; round++) {
      const permits = Array.from({ length: 20 }, () => limiter.tryAcquire());
      now += round < 10 ? 10 : 100;
      for (const permit of permits) if (!(permit instanceof Error)) permit.succeed();
    }
    return limiter.snapshot().limit;
  };
  return limitAfter('gradient') === limitAfter('aimd') ? ['aimd'] : ['gradient', 'aimd'];
}
