// The peers, each as its README shows it, and no breaker at all. `peers`: the
// versions this repository installs, opossum 9.0.0 and cockatiel 3.2.1 (the
// versions that still run on Node 20; opossum 10 and cockatiel 4 need Node 22).
// `peersOf()` builds the same rows from other copies of the two packages:
// current-peers.mjs gives it opossum 10 and cockatiel 4, loaded from a
// directory of their own under Node 22.

import { readFileSync } from 'node:fs';
import InstalledOpossum from 'opossum';
import * as installedCockatiel from 'cockatiel';

const installed = (name) =>
  JSON.parse(
    readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8'),
  ).version;

/**
 * The rows, from opossum's `CircuitBreaker` class and cockatiel's module;
 * `versions` (`{ opossum, cockatiel }`) name them in the labels.
 */
export function peersOf({ CircuitBreaker, cockatiel, versions }) {
  const { circuitBreaker, ConsecutiveBreaker, handleAll, SamplingBreaker } = cockatiel;
  const { timeout, TimeoutStrategy, wrap } = cockatiel;
  return {
    none: {
      name: 'none',
      label: 'no breaker',
      make: () => ({ call: (fn) => fn(undefined) }),
    },
    opossum: {
      name: 'opossum',
      label: `opossum ${versions.opossum}, defaults`,
      make: () => {
        const breaker = new CircuitBreaker((fn) => fn(undefined), {});
        return { call: (fn) => breaker.fire(fn), close: () => breaker.shutdown() };
      },
    },
    cockatielConsecutive: {
      name: 'cockatielConsecutive',
      label: `cockatiel ${versions.cockatiel}, ConsecutiveBreaker(5), halfOpenAfter 10 s`,
      make: () => {
        const policy = circuitBreaker(handleAll, {
          halfOpenAfter: 10_000,
          breaker: new ConsecutiveBreaker(5),
        });
        return { call: (fn) => policy.execute(({ signal }) => fn(signal)) };
      },
    },
    cockatielSampling: {
      name: 'cockatielSampling',
      label: `cockatiel ${versions.cockatiel}, SamplingBreaker({ threshold: 0.2, duration: 30 s }), halfOpenAfter 10 s, wrapped around timeout(2000, Cooperative)`,
      make: () => {
        const policy = wrap(
          circuitBreaker(handleAll, {
            halfOpenAfter: 10_000,
            breaker: new SamplingBreaker({ threshold: 0.2, duration: 30_000 }),
          }),
          timeout(2_000, TimeoutStrategy.Cooperative),
        );
        return { call: (fn) => policy.execute(({ signal }) => fn(signal)) };
      },
    },
  };
}

export const peers = peersOf({
  CircuitBreaker: InstalledOpossum,
  cockatiel: installedCockatiel,
  versions: { opossum: installed('opossum'), cockatiel: installed('cockatiel') },
});
