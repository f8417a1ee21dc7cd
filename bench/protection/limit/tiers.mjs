// Section 4 of bench/LIMIT-RESULTS.md: two tiers. The callers of the
// protection simulator's scenario 6 (a retry storm: capacity at 70% of the
// load for 10 s, each caller retrying 3 times at once) call a callee that
// may have the inbound limiter in front of the simulated dependency; the
// callers may have this package's outbound breaker with withRetry (the
// `oursRetry` row of bench/protection/ours.mjs). A shed request is answered
// as the package's exception filter answers it: 503 with the header
// `circuit-breaker-code: LOAD_SHED` and no Retry-After, which the caller's
// breaker counts as overload (client-side throttling, no pause); a row may
// force the answer of the first version, 503 + Retry-After 1 s, which the
// breaker honours by pausing every call. The callee's limiter
// holds a place until the dependency has served the request (the server
// cannot tell that the caller gave up), and counts an answer later than the
// callers' 1 s timeout as a timeout (drop()), as in section 1.

import { oursImplementations } from '../ours.mjs';
import { retryStorm } from '../scenarios.mjs';
import { simulate } from '../simulate.mjs';

/**
 * The 503 a callee answers a shed request with, as an HTTP client reports it: the package's
 * answer to `refusal` (its code header, a Retry-After only when the refusal carries a pause), or
 * with `retryAfterMs` forced.
 */
function shedAnswer(refusal, retryAfterMs) {
  const error = new Error('Service Unavailable');
  error.status = 503;
  if (retryAfterMs !== undefined) {
    error.retryAfterMs = retryAfterMs;
    return error;
  }
  error.headers = { 'circuit-breaker-code': refusal.code };
  if (refusal.retryAfterMs !== undefined) error.retryAfterMs = refusal.retryAfterMs;
  return error;
}

function abortedBy(signals) {
  return new Promise((_, reject) => {
    for (const signal of signals) {
      const fail = () =>
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (signal.aborted) fail();
      else signal.addEventListener('abort', fail, { once: true });
    }
  });
}

/**
 * Puts `limiter` in front of `dependency`: its requests take a place first, or get a 503 (the
 * package's answer, or with `retryAfterMs` when given). A place
 * is held until the dependency has answered; an answer later than `deadlineMs` after the request
 * arrived ends it with drop().
 */
export function limitCallee(dependency, limiter, time, deadlineMs, retryAfterMs) {
  const serve = dependency.request.bind(dependency);
  dependency.request = async (signals) => {
    const arrivedAt = time.now;
    let permit;
    try {
      permit = await limiter.acquire('critical');
    } catch (error) {
      permit = error;
    }
    if (permit instanceof Error) {
      dependency.received++; // the callee received it (serve() counts the others)
      // Answered at once, as the dependency's own refusals are: 1 ms on the wire.
      await new Promise((resolve) => setTimeout(resolve, 1));
      throw shedAnswer(permit, retryAfterMs);
    }
    const served = serve([]);
    // As in section 1: answered within the callers' timeout, a latency sample; later, a timeout
    // (the overload sign drop() is for). The callee cannot tell that a caller gave up earlier.
    served.then(
      () => (time.now - arrivedAt <= deadlineMs ? permit.succeed() : permit.drop()),
      () => permit.drop(),
    );
    return signals.length === 0 ? served : Promise.race([served, abortedBy(signals)]);
  };
  return dependency;
}

/**
 * The rows: for each of `limits` (`[{ text, options, retryAfterMs?, bothOnly? }]`: the callee's
 * limiter, and a Retry-After its 503 is forced to carry) both sides and the callee alone (unless
 * `bothOnly`); then the caller's breaker alone, and neither.
 */
export function tierRows(core, limits) {
  const { oursRetry } = oursImplementations(core);
  const plain = { call: (fn) => fn(undefined) };
  const limited = (context, options, retryAfterMs) =>
    limitCallee(
      context.dependency,
      new core.ConcurrencyLimiter('callee', options, { clock: context.time.clock }),
      context.time,
      retryStorm().clientTimeoutMs,
      retryAfterMs,
    );
  return [
    ...limits.flatMap(({ text, options, retryAfterMs, bothOnly = false }) => {
      return [
        {
          name: `both ${text}`,
          label: `both: caller breaker + withRetry, callee ${text}`,
          make: (context) => (limited(context, options, retryAfterMs), oursRetry.make(context)),
        },
        ...(bothOnly
          ? []
          : [
              {
                name: `callee ${text}`,
                label: `callee ${text} alone (naive retries)`,
                make: (context) => (limited(context, options, retryAfterMs), plain),
              },
            ]),
      ];
    }),
    { name: 'caller', label: 'caller breaker + withRetry alone', make: oursRetry.make },
    { name: 'neither', label: 'neither (naive retries)', make: () => plain },
  ];
}

/** The retry storm through each row: `[{ row, figures }]` (the figures of bench/protection/simulate.mjs). */
export async function tierFigures(core, limits, seed, afterMs = 60_000) {
  const out = [];
  for (const row of tierRows(core, limits)) {
    out.push({ row, figures: await simulate(retryStorm(afterMs), row, { seed }) });
  }
  return out;
}
