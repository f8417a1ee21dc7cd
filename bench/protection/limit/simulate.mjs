// One limit scenario through one row (a limiter, or none), in virtual time:
// open-loop Poisson arrivals at the rate of the scenario's current phase, each
// with a criticality, through the row's limiter into the semaphore server of
// Netflix's Example.java (./server.mjs). A request answered later than the
// clients' timeout after it arrived ends its permit with drop() (a timeout:
// the server's deadline is its clients'), any other with succeed(). Returns every request's outcome and
// the limit sampled every 100 ms; ./figures.mjs reads the figures from them.
// Reproducible from `seed`: arrivals, service times and criticalities draw
// from separate seeded streams, so every row sees the same arrivals.

import { seeded } from '../dependency.mjs';
import { VirtualTime } from '../virtual-time.mjs';
import { SemaphoreServer } from './server.mjs';

export const SAMPLE_MS = 100;
/** Outcomes: served within the client's timeout, served after it (the client had left), shed. */
export const OK = 0;
export const LATE = 1;
export const SHED = 2;

/** The arrival rate (requests/s) at `atMs`: the last phase begun by then. */
export function rateAt(scenario, atMs) {
  let rate = 0;
  for (const phase of scenario.phases) if (phase.atMs <= atMs) rate = phase.rate;
  return rate;
}

function makeRequest(time, server, limiter, scenario, out) {
  return async function request(critical) {
    const arrivedAt = time.now;
    const i = out.arrivedAt.push(arrivedAt) - 1;
    out.critical.push(critical);
    // Until it is answered: not served in time, latency unknown (still waiting at the end).
    out.outcome.push(LATE);
    out.latency.push(Number.POSITIVE_INFINITY);
    let permit;
    if (limiter !== undefined) {
      let got;
      try {
        got = await limiter.acquire(critical ? 'critical' : 'sheddable');
      } catch (error) {
        got = error;
      }
      if (got instanceof Error) {
        out.outcome[i] = SHED;
        out.latency[i] = time.now - arrivedAt;
        return;
      }
      permit = got;
    }
    await server.request();
    const latency = time.now - arrivedAt;
    out.latency[i] = latency;
    out.outcome[i] = latency <= scenario.clientTimeoutMs ? OK : LATE;
    // Answered after the clients' timeout: a timeout (the server's deadline is its clients'), the
    // overload sign drop() is for. The server cannot tell that a client left earlier.
    if (out.outcome[i] === OK) permit?.succeed();
    else permit?.drop();
  };
}

/**
 * Runs `scenario` through `row` (`row.make({ time, clock })` returns a limiter with
 * `acquire(criticality)` and `snapshot()`, or undefined for no limit).
 */
export async function simulateLimit(scenario, row, { seed = 1 } = {}) {
  const time = new VirtualTime();
  const out = {
    arrivedAt: [],
    critical: [],
    outcome: [],
    latency: [],
    limit: [],
    inFlight: [],
    queued: [],
  };
  time.install();
  try {
    const arrivals = seeded(seed);
    const kinds = seeded(seed + 2);
    const server = new SemaphoreServer(time, seeded(seed + 1), scenario.server);
    const limiter = row.make({ time, clock: time.clock });
    const request = makeRequest(time, server, limiter, scenario, out);
    const share = scenario.criticalShare ?? 1;
    const arrive = () => {
      if (time.now >= scenario.durationMs) return;
      void request(share >= 1 || kinds() < share);
      setTimeout(arrive, (-Math.log(1 - arrivals()) * 1000) / rateAt(scenario, time.now));
    };
    setTimeout(arrive, 0);
    for (const stall of scenario.stalls ?? []) setTimeout(() => server.stall(stall.ms), stall.atMs);
    const sample = () => {
      const snapshot = limiter?.snapshot();
      out.limit.push(snapshot === undefined ? Number.NaN : snapshot.limit);
      out.inFlight.push(snapshot === undefined ? server.inService.size : snapshot.inFlight);
      out.queued.push(snapshot === undefined ? server.queue.length : snapshot.queued);
      if (time.now + SAMPLE_MS < scenario.durationMs) setTimeout(sample, SAMPLE_MS);
    };
    setTimeout(sample, 0);
    // Past the last arrival, long enough for what is queued to be served (or shed).
    await time.runUntil(scenario.durationMs + (scenario.settleMs ?? 30_000));
    if (time.errors.length > 0) throw time.errors[0];
    return { scenario, row: row.name, ...out, served: server.served };
  } finally {
    time.uninstall();
  }
}
