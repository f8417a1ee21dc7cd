// The limit scenarios of issue 30, on the server of Netflix concurrency-limits'
// Example.java: concurrency 2 (a fair semaphore, the rest queued), log-normal
// latency of 20 ms mean, so 100 requests/s of capacity and a true limit of 2.
// Clients give up after 1 s (a request served later is not goodput).

export const SERVER = Object.freeze({ concurrency: 2, meanMs: 20, mu: 3, sigma: 1 });
/** Requests/s the server serves when busy all the time. */
export const CAPACITY = (SERVER.concurrency * 1000) / SERVER.meanMs;
/** The concurrency it can really run: a limit above it only queues in the server. */
export const TRUE_LIMIT = SERVER.concurrency;
export const CLIENT_TIMEOUT_MS = 1_000;

const base = { server: SERVER, clientTimeoutMs: CLIENT_TIMEOUT_MS };

/** Netflix's step load: Poisson arrivals at each of `rates` (requests/s) for `stepMs`. */
export function stepLoad({ rates = [50, 90, 200, 100], stepMs = 100_000 } = {}) {
  return {
    ...base,
    name: `step load ${rates.join(', ')} rps, ${stepMs / 1000} s each`,
    phases: rates.map((rate, i) => ({ atMs: i * stepMs, rate })),
    durationMs: rates.length * stepMs,
  };
}

/** The server alone at a low rate: the unloaded latency the others are held to. */
export function unloaded({ rate = 10, durationMs = 300_000 } = {}) {
  return {
    ...base,
    name: `unloaded, ${rate} rps`,
    phases: [{ atMs: 0, rate }],
    durationMs,
  };
}

/** Mild overload for a long time: does the limit creep up (Netflix/concurrency-limits#134)? */
export function drift({ load = 1.2, durationMs = 600_000 } = {}) {
  return {
    ...base,
    name: `${load}x capacity for ${durationMs / 60_000} min`,
    phases: [{ atMs: 0, rate: load * CAPACITY }],
    durationMs,
  };
}

/** A GC-like pause of `ms` at `atMs` under steady load: does the limit collapse to its floor? */
export function stall({ load = 0.9, atMs = 60_000, ms = 500, durationMs = 120_000 } = {}) {
  return {
    ...base,
    name: `${ms} ms stall at ${atMs / 1000} s, ${load}x capacity`,
    phases: [{ atMs: 0, rate: load * CAPACITY }],
    stalls: [{ atMs, ms }],
    durationMs,
  };
}

/**
 * `load` x capacity for `durationMs`, `criticalShare` of it critical and the rest sheddable, after
 * `warmupMs` at half capacity: a running service whose load rises, so that a limit has learned
 * the service unloaded first (a gradient limit started cold under overload takes minutes to
 * come down from its initial limit).
 */
export function mix({ load, criticalShare = 0.2, durationMs = 60_000, warmupMs = 60_000 }) {
  return {
    ...base,
    name: `${load}x capacity, ${criticalShare * 100}% critical`,
    phases: [
      { atMs: 0, rate: 0.5 * CAPACITY },
      { atMs: warmupMs, rate: load * CAPACITY },
    ],
    criticalShare,
    durationMs: warmupMs + durationMs,
  };
}

/** Offered loads of the criticality mix, x capacity. */
export const MIX_LOADS = [0.5, 1, 1.5, 2, 3, 4];
