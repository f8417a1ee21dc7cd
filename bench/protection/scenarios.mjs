// The scenarios of issue 27, each a script of the dependency's conditions over
// time. Base: 100 calls/s, a dependency of 20 slots at ~50 ms (about 350
// calls/s of capacity, 3.5 times the load), a 1 s client timeout, the
// incident at 30 s.

const base = {
  rate: 100,
  clientTimeoutMs: 1_000,
  clientTimeout: 'abort',
  incidentAtMs: 30_000,
  dependency: { slots: 20, serviceMs: 50, contention: 0.1 },
};

/** The capacity (a share of the healthy dependency's) that serves `share` of the load. */
function ofLoad(share) {
  const { slots, serviceMs } = base.dependency;
  return (share * base.rate * serviceMs) / (slots * 1000);
}

/** One incident of `lengthMs` from 30 s, then healthy for `afterMs`. */
function incident(name, condition, lengthMs, afterMs, extra = {}) {
  const end = base.incidentAtMs + lengthMs;
  return {
    ...base,
    name,
    phases: [
      { atMs: base.incidentAtMs, condition },
      { atMs: end, condition: { mode: 'healthy' } },
    ],
    healthyAtMs: end,
    durationMs: end + afterMs,
    ...extra,
  };
}

/** Scenario 1 for one outage length (swept: the open period's phase must not decide). */
export function hardOutage(lengthMs, afterMs = 60_000) {
  return incident(`hard outage ${lengthMs / 1000} s`, { mode: 'down' }, lengthMs, afterMs);
}

export function hung(clientTimeout, lengthMs = 60_000, afterMs = 60_000) {
  return incident(
    `hung ${lengthMs / 1000} s (${clientTimeout})`,
    { mode: 'hung' },
    lengthMs,
    afterMs,
    {
      clientTimeout,
    },
  );
}

export function brownout(lengthMs = 120_000, afterMs = 30_000) {
  return incident('brownout', { failRate: 0.3, latency: 3 }, lengthMs, afterMs);
}

export function slow(lengthMs = 60_000, afterMs = 30_000) {
  return incident('slow x10', { latency: 10 }, lengthMs, afterMs);
}

/** Scenario 5: down for 30 s, back at 10% of the load (10 calls/s) for `reducedMs`, then whole. */
export function reducedCapacity(reducedMs = 60_000, afterMs = 60_000) {
  const back = base.incidentAtMs + 30_000;
  const whole = back + reducedMs;
  return {
    ...base,
    name: 'recovery at 10% capacity',
    phases: [
      { atMs: base.incidentAtMs, condition: { mode: 'down' } },
      { atMs: back, condition: { capacity: ofLoad(0.1) } },
      { atMs: whole, condition: { mode: 'healthy' } },
    ],
    healthyAtMs: whole,
    durationMs: whole + afterMs,
  };
}

/** Scenario 6: capacity at 70% of the load for 10 s, callers retrying 3 times at once. */
export function retryStorm(afterMs = 60_000) {
  return incident('retry storm', { capacity: ofLoad(0.7) }, 10_000, afterMs, { retries: 3 });
}

/** Scenario 7: capacity at 50% of the load, the excess answered 429 + Retry-After: 2 s. */
export function overloaded(lengthMs = 60_000, afterMs = 30_000) {
  return incident(
    'overload 429',
    { mode: 'shedding', capacity: ofLoad(0.5), maxQueue: 20, retryAfterMs: 2_000 },
    lengthMs,
    afterMs,
  );
}

/**
 * Scenario 8 (Buoyant's failure-accrual demo): five hosts of 4 slots each (the
 * same capacity in all), one of them answering 40% of its calls 5xx with
 * 100 ms added for `lengthMs`. A request goes to a host at random; a load
 * balancer moves on to the next host when that host's breaker turns it away.
 */
export function badHost(lengthMs = 120_000, afterMs = 30_000) {
  const end = base.incidentAtMs + lengthMs;
  return {
    ...base,
    name: 'one bad host of five',
    hosts: 5,
    dependency: { ...base.dependency, slots: base.dependency.slots / 5 },
    phases: [
      { atMs: base.incidentAtMs, host: 0, condition: { failRate: 0.4, addedMs: 100 } },
      { atMs: end, host: 0, condition: { mode: 'healthy' } },
    ],
    healthyAtMs: end,
    durationMs: end + afterMs,
  };
}

/**
 * Scenario 9: the hard outage of scenario 1 seen from a fleet of `replicas`
 * replicas, each with its own breaker and a tenth of the callers (a request
 * lands on one replica at random), all calling the one dependency.
 */
export function fleetOutage(lengthMs = 60_000, afterMs = 60_000, replicas = 10) {
  return {
    ...hardOutage(lengthMs, afterMs),
    name: `fleet of ${replicas}, hard outage ${lengthMs / 1000} s`,
    replicas,
  };
}

/** Outage lengths of scenario 1: 60 s and lengths spread over a 30 s open period. */
export const OUTAGE_SWEEP_MS = [60_000, 67_500, 75_000, 82_500];
export const OUTAGE_SWEEP_QUICK_MS = [60_000, 75_000];
