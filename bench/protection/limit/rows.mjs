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

/** Whether `core` knows `algorithm` (the gradient limit lands after the others). */
export function hasAlgorithm(core, algorithm) {
  try {
    return new core.ConcurrencyLimiter('probe', { algorithm }).snapshot().algorithm === algorithm;
  } catch {
    return false;
  }
}
