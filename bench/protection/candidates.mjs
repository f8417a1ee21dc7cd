// Candidate defaults for this package (issue 27): the engine as it is, given
// options that a new default could be, run through every scenario beside
// the previous defaults and the peers. Two levers the engine does not have yet are
// modelled here, outside it, and named so in every table:
//
// - an adaptive deadline: 5 x the p99 of the last 128 successful calls, within
//   [500 ms, 10 s] (10 s until 32 successes are seen), replacing `timeoutMs`;
// - an adaptive slow start: after a recovery closes the breaker, 10 % of the
//   calls pass, doubling every 250 ms in which no admitted call failed and
//   halving (not below 10 %) in 250 ms with a failure; the rest are turned
//   away at once, as `rampUp` turns them away.

/** Where the candidate-defaults section starts in bench/PROTECTION-RESULTS.md (run.mjs keeps it). */
export const CANDIDATES_MARKER = '<!-- candidate defaults: bench/protection/defaults.mjs -->';

/** The deadline that follows observed latency (a model, see above). */
export function adaptiveDeadline(
  now,
  { factor = 5, minMs = 500, maxMs = 10_000, samples = 128 } = {},
) {
  const ring = new Float64Array(samples);
  let seen = 0;
  let deadline = maxMs;
  const record = (ms) => {
    ring[seen % samples] = ms;
    seen++;
    if (seen < 32 || seen % 16 !== 0) return;
    const sorted = ring.subarray(0, Math.min(seen, samples)).toSorted();
    const p99 = sorted[Math.floor(0.99 * (sorted.length - 1))];
    deadline = Math.min(maxMs, Math.max(minMs, factor * p99));
  };
  return (fn) => (signal) => {
    const controller = new AbortController();
    const started = now();
    const timer = setTimeout(() => {
      const error = new Error('adaptive deadline');
      error.name = 'TimeoutError';
      controller.abort(error);
    }, deadline);
    if (signal !== undefined) {
      if (signal.aborted) controller.abort(signal.reason);
      else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    }
    return fn(controller.signal).then(
      (value) => {
        clearTimeout(timer);
        record(now() - started);
        return value;
      },
      (error) => {
        clearTimeout(timer);
        throw error;
      },
    );
  };
}

/** The slow start that speeds up while calls succeed (a model, see above). */
export function adaptiveRamp(breaker, now, { initialRatio = 0.1, stepMs = 250 } = {}) {
  let ramp;
  breaker.on('stateChange', (change) => {
    ramp =
      change.to === 'closed' && change.from !== 'closed' && change.reason !== 'reset'
        ? { share: initialRatio, credit: 1, stepAt: now(), failed: 0, passed: 0 }
        : undefined;
  });
  return (call) => {
    if (ramp === undefined) return call();
    const current = ramp;
    const at = now();
    while (at - current.stepAt >= stepMs) {
      current.stepAt += stepMs;
      if (current.failed > 0) current.share = Math.max(initialRatio, current.share / 2);
      else if (current.passed > 0) current.share *= 2;
      current.failed = 0;
      current.passed = 0;
    }
    if (current.share >= 1) {
      ramp = undefined;
      return call();
    }
    current.credit += current.share;
    if (current.credit < 1) return Promise.reject(new Error('adaptive ramp-up'));
    current.credit -= 1;
    const result = call();
    result.then(
      () => current.passed++,
      () => current.failed++,
    );
    return result;
  };
}

/**
 * A row of this package with `options` and the modelled levers named in
 * `models` (`deadline`, `ramp`); `keyed` scenarios (several hosts, several
 * replicas) get one breaker per key (per-key children behave alike).
 */
function candidate(id, label, options, models = {}) {
  const makeOne = (core, { time, random }) => {
    const now = () => time.clock.monotonic();
    const resolved = models.deadline ? { ...options, timeoutMs: false } : options;
    const breaker = new core.Breaker('dependency', resolved, { clock: time.clock, random });
    const wrap = models.deadline ? adaptiveDeadline(now) : (fn) => fn;
    const gate = models.ramp ? adaptiveRamp(breaker, now) : (call) => call();
    return { call: (fn) => gate(() => breaker.execute(({ signal }) => wrap(fn)(signal))) };
  };
  return (core) => ({ name: id, label, make: (context) => makeOne(core, context) });
}

/** The candidates, the previous defaults first (C is the default now). */
export const CANDIDATES = [
  candidate('T', 'previous defaults (open 30 s, deadline 10 s, rate rule)', {
    openDurationMs: 30_000,
    timeoutMs: 10_000,
    consecutiveFailures: false,
  }),
  candidate('A', 'A: openDurationMs 10 s', { openDurationMs: 10_000 }),
  candidate('B', 'B: A + timeoutMs 2 s', { openDurationMs: 10_000, timeoutMs: 2_000 }),
  candidate('C', 'C: B + consecutiveFailures 10 beside the rate rule', {
    openDurationMs: 10_000,
    timeoutMs: 2_000,
    consecutiveFailures: 10,
    failureRateThreshold: 0.5,
  }),
  candidate('D', 'D: C + rampUp { durationMs: 5 s } (linear)', {
    openDurationMs: 10_000,
    timeoutMs: 2_000,
    consecutiveFailures: 10,
    failureRateThreshold: 0.5,
    rampUp: { durationMs: 5_000 },
  }),
  candidate(
    'E',
    'E: C + adaptive slow start (modelled)',
    {
      openDurationMs: 10_000,
      timeoutMs: 2_000,
      consecutiveFailures: 10,
      failureRateThreshold: 0.5,
    },
    { ramp: true },
  ),
  candidate(
    'F',
    'F: E with the adaptive deadline (modelled) for the 2 s one',
    { openDurationMs: 10_000, consecutiveFailures: 10, failureRateThreshold: 0.5 },
    { ramp: true, deadline: true },
  ),
];
