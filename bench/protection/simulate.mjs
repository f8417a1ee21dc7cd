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

/** Calls `dependency.request` through `implementation`, as a caller with a client timeout would. */
function makeCaller(scenario, time, dependency, protectedCall, stats) {
  const raceOnly = scenario.clientTimeout === 'race';
  return async function attempt() {
    const started = time.now;
    let reached = false;
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error('client timeout')),
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
    return ok;
  };
}

/**
 * Runs `scenario` through `implementation` and returns its figures.
 * `implementation.make({ time, dependency, random, attempts })` returns
 * `{ call(fn), close?() }`, where `fn(signal?)` makes one call to the dependency.
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
  let instance;
  try {
    const arrivalsRandom = seeded(seed);
    const dependency = new Dependency(time, seeded(seed + 1), scenario.dependency);
    const retries = scenario.retries ?? 0;
    instance = implementation.make({
      time,
      dependency,
      random: seeded(seed + 2),
      attempts: 1 + retries,
    });
    const attempt = makeCaller(scenario, time, dependency, (fn) => instance.call(fn), stats);
    // Naive retries: at once, on any failure, unless the implementation retries itself.
    const tries = instance.retries ? 1 : 1 + retries;
    const request = async () => {
      const arrivedAt = time.now;
      const bucket = Math.floor(arrivedAt / BUCKET_MS);
      stats.requests++;
      stats.arrivals[bucket]++;
      let ok = false;
      for (let i = 0; i < tries && !ok; i++) ok = await attempt();
      if (ok) stats.successes[bucket]++;
      if (arrivedAt >= scenario.incidentAtMs) stats.latencies.push(time.now - arrivedAt);
    };
    for (const phase of scenario.phases) {
      setTimeout(() => dependency.setCondition(phase.condition), phase.atMs);
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
    return figures(scenario, stats, dependency);
  } finally {
    instance?.close?.();
    time.uninstall();
  }
}

function figures(scenario, stats, dependency) {
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
    amplification: dependency.received / Math.max(1, stats.requests),
    requests: stats.requests,
    series: {
      bucketMs: BUCKET_MS,
      arrivals: Array.from(stats.arrivals.subarray(0, end)),
      successes: Array.from(stats.successes.subarray(0, end)),
      depCalls: Array.from(stats.depCalls.subarray(0, end)),
    },
  };
}
