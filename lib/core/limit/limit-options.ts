import { OptionChecker } from '../options/option-checker.js';
import { MAX_TIMER_MS } from '../options/option-values.js';

/** The ways a limit is found: measured latency (`gradient`), overload signs alone (`aimd`), or a number (`fixed`). @publicApi */
export type LimitAlgorithmName = 'gradient' | 'aimd' | 'fixed';

/**
 * The options of a concurrency limiter: how its limit is found, its bounds,
 * and who may wait for a place.
 *
 * @publicApi
 */
export interface ConcurrencyLimitOptions {
  /**
   * How the limit follows the service: `gradient` (default) lowers it as
   * latency rises above the latency measured without load, `aimd` adds one
   * while the limit is used and cuts it on overload signs, `fixed` keeps
   * `initialLimit`.
   */
  algorithm?: LimitAlgorithmName;
  /** The limit before any measurement, and the limit of `fixed`. Default 20. */
  initialLimit?: number;
  /** The limit never goes below this. Default 1. */
  minLimit?: number;
  /** The limit never goes above this. Default 1000. */
  maxLimit?: number;
  /**
   * Requests that may wait for a place once the limit is reached; 0 sheds
   * every request beyond the limit at once. Default 16: a heavy-tailed
   * service at its limit has bursts a queue absorbs (without one, the
   * gradient limit sheds about a third of the requests at 0.9x capacity in
   * `npm run bench:limit`), and a freed place goes to the most important
   * request waiting.
   */
  maxQueue?: number;
  /**
   * How long a request may wait for a place before it is shed. Default
   * 125 ms: in `npm run bench:limit`, long enough that critical requests keep
   * at least 95 % of their goodput at 4x capacity, short enough that p99
   * stays near 2x the unloaded p99 at 2x.
   */
  queueTimeoutMs?: number;
}

/** Every option of a limiter, given or defaulted. @internal */
export type ResolvedLimitOptions = Required<ConcurrencyLimitOptions>;

/** The defaults of a concurrency limiter's options. @publicApi */
export const LIMIT_DEFAULTS: Readonly<Required<ConcurrencyLimitOptions>> = Object.freeze({
  algorithm: 'gradient',
  initialLimit: 20,
  minLimit: 1,
  maxLimit: 1000,
  maxQueue: 16,
  queueTimeoutMs: 125,
});

const ALGORITHMS: readonly LimitAlgorithmName[] = ['gradient', 'aimd', 'fixed'];
const KNOWN = Object.keys(LIMIT_DEFAULTS);

/**
 * Checks a limiter's options and fills in the defaults; an error names the
 * limiter and the option (and the closest option for a typo).
 *
 * @internal
 */
export function resolveLimitOptions(
  name: string,
  options: ConcurrencyLimitOptions | undefined,
  checker: OptionChecker = new OptionChecker(`Concurrency limiter "${name}"`),
): ResolvedLimitOptions {
  const given = options === undefined ? {} : checker.record('', options, KNOWN);
  const count = (option: string, min: number): number =>
    given[option] === undefined
      ? (LIMIT_DEFAULTS as unknown as Record<string, number>)[option]!
      : checker.number(option, given[option], { min, integer: true }, `an integer >= ${min}`);
  const algorithm =
    given.algorithm === undefined
      ? LIMIT_DEFAULTS.algorithm
      : (checker.oneOf('algorithm', given.algorithm, ALGORITHMS) as LimitAlgorithmName);
  const { minLimit, maxLimit, initialLimit } = boundsOf(algorithm, given, count, checker);
  const queueTimeoutMs =
    given.queueTimeoutMs === undefined
      ? LIMIT_DEFAULTS.queueTimeoutMs
      : checker.number(
          'queueTimeoutMs',
          given.queueTimeoutMs,
          { min: 0, minExclusive: true, max: MAX_TIMER_MS },
          `a positive number of milliseconds up to ${MAX_TIMER_MS}`,
        );
  const maxQueue = count('maxQueue', 0);
  // Nothing is silently ignored: a deadline for a queue that holds nobody says the options are not what was meant.
  if (maxQueue === 0 && given.queueTimeoutMs !== undefined)
    checker.fail(
      'queueTimeoutMs',
      'queueTimeoutMs applies to requests waiting in the queue, and maxQueue is 0: nobody waits. Give maxQueue, or leave queueTimeoutMs out.',
    );
  return Object.freeze({ algorithm, initialLimit, minLimit, maxLimit, maxQueue, queueTimeoutMs });
}

/** The limit's bounds and start; a fixed limit takes none (it never moves), and its limit is any count. */
function boundsOf(
  algorithm: LimitAlgorithmName,
  given: Record<string, unknown>,
  count: (option: string, min: number) => number,
  checker: OptionChecker,
): { minLimit: number; maxLimit: number; initialLimit: number } {
  if (algorithm === 'fixed') {
    for (const bound of ['minLimit', 'maxLimit'])
      if (given[bound] !== undefined)
        checker.fail(
          bound,
          `${bound} bounds an adaptive limit, and algorithm 'fixed' keeps initialLimit. Leave ${bound} out, or choose 'gradient' or 'aimd'.`,
        );
    const initialLimit = count('initialLimit', 1);
    return { minLimit: initialLimit, maxLimit: initialLimit, initialLimit };
  }
  const minLimit = count('minLimit', 1);
  const maxLimit = count('maxLimit', 1);
  if (maxLimit < minLimit)
    checker.fail('maxLimit', `maxLimit (${maxLimit}) must not be below minLimit (${minLimit}).`);
  const initialLimit =
    given.initialLimit === undefined
      ? Math.min(maxLimit, Math.max(minLimit, LIMIT_DEFAULTS.initialLimit))
      : count('initialLimit', 1);
  if (initialLimit < minLimit || initialLimit > maxLimit)
    checker.fail(
      'initialLimit',
      `initialLimit (${initialLimit}) must be within minLimit (${minLimit}) and maxLimit (${maxLimit}).`,
    );
  return { minLimit, maxLimit, initialLimit };
}
