import type { BreakerOptions } from 'nestjs-circuit-breaker';

/** Where the sample's dependencies live: filled in at start-up with loopback URLs. */
export const UPSTREAMS = Symbol('UPSTREAMS');

export interface Upstreams {
  /** The catalog and pricing service. */
  primary: string;
  /** One inventory service per warehouse: the per-key breaker keeps them apart. */
  warehouses: Record<string, string>;
}

/** Every breaker option the sample uses is set here, in one place. */
export const BREAKER_DEFAULTS: BreakerOptions = {
  // A fleet of replicas without shared state should not probe in lockstep.
  jitter: 0.1,
  openDurationMs: 2_000,
  // No timeoutMs: every call has the default 2 s deadline. Only inventory, whose hung warehouse the demo shows, sets a shorter one.
};

export const BREAKERS: Record<string, BreakerOptions> = {
  // Small numbers so that the demo shows every transition within seconds.
  catalog: {
    window: { type: 'count', size: 10 },
    minimumThroughput: 4,
    failureRateThreshold: 0.5,
    // After recovering, a quarter of the calls at first, all of them 1.5 s later: a just-recovered catalog is not flooded.
    rampUp: { durationMs: 1_500, initialRatio: 0.25 },
  },
  'catalog.search': { window: { type: 'count', size: 10 }, minimumThroughput: 4 },
  pricing: { window: { type: 'time', durationMs: 10_000, buckets: 10 }, minimumThroughput: 4 },
  // One breaker per warehouse: a hung warehouse must not cut off the healthy ones.
  inventory: { perKey: { maxKeys: 100, idleMs: 600_000 }, consecutiveFailures: 2, timeoutMs: 800 },
};
