// One scenario through one implementation, in virtual time: open-loop Poisson
// callers, each call with a client timeout and optionally naive retries,
// against the simulated dependency; returns the figures and the series the
// charts are drawn from. Reproducible from `seed`: arrivals, service times and
// the breakers' own randomness draw from separate seeded streams, so every
// implementation sees the same arrivals.

import { setMaxListeners } from 'node:events';
import { Dependency, seeded } from './dependency.mjs';
import { VirtualTime } from './virtual-time.mjs';

export const BUCKET_MS = 250;

function quantile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function sumRange(values, from, to) {
  let total = 0;
  for (let i = Math.max(0, from); i < Math.min(values.length, to); i++) total += values[i];
  return total;
}

/**
 * The first time at or after `fromMs` from which one whole second of arrivals
 * succeeds at >= 95% of the ratio before the incident, in ms after `fromMs`
 * (a success ratio by arrival, so Poisson noise in the arrivals does not count).
 */
function timeToRecover(arrivals, successes, fromMs, baseline, endMs) {
  const span = 1000 / BUCKET_MS;
  const last = Math.floor(endMs / BUCKET_MS) - span;
  for (let b = Math.ceil(fromMs / BUCKET_MS); b <= last; b++) {
    const offered = sumRange(arrivals, b, b + span);
    if (offered > 0 && sumRange(successes, b, b + span) / offered >= 0.95 * baseline) {
      return b * BUCKET_MS - fromMs;
    }
  }
  return undefined;
}

/**
 * One attempt of a caller: `dependency.request` through `protectedCall`, with
 * a client timeout. Answers `ok`, `failed` (it reached the dependency, or the
 * implementation failed it slowly) or `rejected` (turned away without reaching
 * the dependency: what a load balancer can route around).
 */
function makeCaller(scenario, time, stats) {
  const raceOnly = scenario.clientTimeout === 'race';
  return async function attempt(dependency, protectedCall) {
    const started = time.now;
    let reached = false;
    const controller = new AbortController();
    // The reason an HTTP client's timeout gives (`AbortSignal.timeout`: a TimeoutError).
    const timer = setTimeout(
      () => controller.abort(new DOMException('client timeout', 'TimeoutError')),
      scenario.clientTimeoutMs,
    );
    const fn = (signal) => {
      reached = true;
      stats.depCalls[Math.floor(time.now / BUCKET_MS)]++;
      // The caller's timeout is in its HTTP client's signal, unless it only stops waiting.
      const signals = [raceOnly ? undefined : controller.signal, signal].filter(Boolean);
      // cockatiel gives every call the same signal when it has no timeout of its own.
      if (signal !== undefined) setMaxListeners(0, signal);
      stats.inFlight++;
      if (stats.inFlight > stats.peakInFlight) stats.peakInFlight = stats.inFlight;
      const done = () => stats.inFlight--;
      const call = dependency.request(signals);
      call.then(done, done);
      return call;
    };
    const call = protectedCall(fn).then(
      () => true,
      () => false,
    );
    const ok = raceOnly
      ? await Promise.race([
          call,
          new Promise((resolve) =>
            controller.signal.addEventListener('abort', () => resolve(false), { once: true }),
          ),
        ])
      : await call;
    clearTimeout(timer);
    if (reached && !ok) {
      stats.wasted++;
      stats.waitingMs += time.now - started;
    }
    if (!reached && stats.firstRejectAt === undefined && time.now >= scenario.incidentAtMs) {
      stats.firstRejectAt = time.now;
    }
    return ok ? 'ok' : reached ? 'failed' : 'rejected';
  };
}

/**
 * What a scenario's callers call: one dependency behind one instance; `hosts`
 * dependencies, each behind its own key (a load balancer that picks a host at
 * random and moves on to the next when a breaker turns the call away at once);
 * or one dependency called from `replicas` replicas, each with its own instance
 * (a caller's request lands on one replica at random).
 */
function topology(scenario, time, implementation, seed) {
  const keys = scenario.hosts ?? scenario.replicas ?? 1;
  const dependencies = Array.from(
    { length: scenario.hosts ?? 1 },
    (_, i) => new Dependency(time, seeded(seed + 1 + 1000 * i), scenario.dependency),
  );
  const context = (k) => ({
    time,
    dependency: dependencies[Math.min(k, dependencies.length - 1)],
    dependencies,
    random: seeded(seed + 2 + 1000 * k),
    randomFor: (key) => seeded(seed + 2 + 1000 * key),
    attempts: 1 + (scenario.retries ?? 0),
  });
  let instances;
  if (keys > 1 && implementation.makeKeyed !== undefined) {
    const keyed = implementation.makeKeyed(context(0), keys);
    instances = Array.from({ length: keys }, (_, k) => ({
      retries: keyed.retries,
      call: (fn) => keyed.call(fn, k),
      close: k === 0 ? keyed.close : undefined,
    }));
  } else {
    instances = Array.from({ length: keys }, (_, k) => implementation.make(context(k)));
  }
  const routes = instances.map((instance, k) => ({
    dependency: dependencies[scenario.hosts === undefined ? 0 : k],
    call: (fn) => instance.call(fn),
  }));
  return { dependencies, instances, routes, pick: seeded(seed + 3) };
}

/**
 * Runs `scenario` through `implementation` and returns its figures.
 * `implementation.make({ time, dependency, random, attempts })` returns
 * `{ call(fn), close?() }`, where `fn(signal?)` makes one call to the dependency;
 * for several hosts or replicas, `makeKeyed(context, keys)` (when present)
 * returns one `{ call(fn, key) }` for all of them, else `make()` is called per key.
 */
export async function simulate(scenario, implementation, { seed = 1 } = {}) {
  const time = new VirtualTime();
  const buckets = Math.ceil((scenario.durationMs + 60_000) / BUCKET_MS);
  const stats = {
    arrivals: new Float64Array(buckets),
    successes: new Float64Array(buckets),
    depCalls: new Float64Array(buckets),
    latencies: [],
    wasted: 0,
    waitingMs: 0,
    inFlight: 0,
    peakInFlight: 0,
    firstRejectAt: undefined,
    requests: 0,
  };
  time.install();
  let setup;
  try {
    const arrivalsRandom = seeded(seed);
    setup = topology(scenario, time, implementation, seed);
    const { dependencies, routes, pick } = setup;
    const attempt = makeCaller(scenario, time, stats);
    // Naive retries: at once, on any failure, unless the implementation retries itself.
    const tries = setup.instances[0].retries ? 1 : 1 + (scenario.retries ?? 0);
    const failover = scenario.hosts !== undefined;
    const request = async () => {
      const arrivedAt = time.now;
      const bucket = Math.floor(arrivedAt / BUCKET_MS);
      stats.requests++;
      stats.arrivals[bucket]++;
      const first = routes.length === 1 ? 0 : Math.floor(pick() * routes.length);
      let ok = false;
      for (let i = 0; i < tries && !ok; i++) {
        // A load balancer moves on to the next host while a breaker turns the call away.
        for (let h = 0; h < (failover ? routes.length : 1); h++) {
          const route = routes[(first + h) % routes.length];
          const outcome = await attempt(route.dependency, route.call);
          ok = outcome === 'ok';
          if (outcome !== 'rejected') break;
        }
      }
      if (ok) stats.successes[bucket]++;
      if (arrivedAt >= scenario.incidentAtMs) stats.latencies.push(time.now - arrivedAt);
    };
    for (const phase of scenario.phases) {
      const target = dependencies[phase.host ?? 0];
      setTimeout(() => target.setCondition(phase.condition), phase.atMs);
    }
    const arrive = () => {
      if (time.now >= scenario.durationMs) return;
      void request();
      setTimeout(arrive, (-Math.log(1 - arrivalsRandom()) * 1000) / scenario.rate);
    };
    setTimeout(arrive, 0);
    // Past the last arrival, long enough for every call to settle or time out.
    await time.runUntil(scenario.durationMs + 30_000);
    if (time.errors.length > 0) throw time.errors[0];
    const received = dependencies.reduce((total, d) => total + d.received, 0);
    return figures(scenario, stats, received);
  } finally {
    for (const instance of setup?.instances ?? []) instance.close?.();
    time.uninstall();
  }
}

function figures(scenario, stats, received) {
  const warm = Math.floor(5_000 / BUCKET_MS);
  const incident = Math.floor(scenario.incidentAtMs / BUCKET_MS);
  const end = Math.floor(scenario.durationMs / BUCKET_MS);
  const baseline =
    sumRange(stats.successes, warm, incident) /
    Math.max(1, sumRange(stats.arrivals, warm, incident));
  const latencies = stats.latencies.toSorted((a, b) => a - b);
  const ttr = timeToRecover(
    stats.arrivals,
    stats.successes,
    scenario.healthyAtMs,
    baseline,
    scenario.durationMs,
  );
  return {
    wasted: stats.wasted,
    peakInFlight: stats.peakInFlight,
    waitingS: stats.waitingMs / 1000,
    detectMs:
      stats.firstRejectAt === undefined ? undefined : stats.firstRejectAt - scenario.incidentAtMs,
    recoverMs: ttr,
    goodput:
      (sumRange(stats.successes, incident, end) * 1000) /
      (scenario.durationMs - scenario.incidentAtMs),
    baselineGoodput:
      (sumRange(stats.successes, warm, incident) * 1000) / ((incident - warm) * BUCKET_MS),
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    amplification: received / Math.max(1, stats.requests),
    requests: stats.requests,
    series: {
      bucketMs: BUCKET_MS,
      arrivals: Array.from(stats.arrivals.subarray(0, end)),
      successes: Array.from(stats.successes.subarray(0, end)),
      depCalls: Array.from(stats.depCalls.subarray(0, end)),
    },
  };
}
