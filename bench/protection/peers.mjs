// The peers, each as its README shows it, and no breaker at all. opossum 9.0.0
// and cockatiel 3.2.1 (the versions that still run on Node 20; opossum 10 and
// cockatiel 4 need Node 22).

import CircuitBreaker from 'opossum';
import {
  circuitBreaker,
  ConsecutiveBreaker,
  handleAll,
  SamplingBreaker,
  timeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';

export const peers = {
  none: {
    name: 'none',
    label: 'no breaker',
    make: () => ({ call: (fn) => fn(undefined) }),
  },
  opossum: {
    name: 'opossum',
    label: 'opossum 9.0.0, defaults',
    make: () => {
      const breaker = new CircuitBreaker((fn) => fn(undefined), {});
      return { call: (fn) => breaker.fire(fn), close: () => breaker.shutdown() };
    },
  },
  cockatielConsecutive: {
    name: 'cockatielConsecutive',
    label: 'cockatiel 3.2.1, ConsecutiveBreaker(5), halfOpenAfter 10 s',
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
    label:
      'cockatiel 3.2.1, SamplingBreaker({ threshold: 0.2, duration: 30 s }), halfOpenAfter 10 s, wrapped around timeout(2000, Cooperative)',
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
