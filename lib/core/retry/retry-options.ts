import { breakerOptionMessages } from '../breaker-options.messages.js';
import type { OptionChecker } from '../option-checker.js';
import { MAX_TIMER_MS, or } from '../option-values.js';

/**
 * How long to wait before each retry, when the dependency did not say: the
 * wait grows from `initialMs` by `multiplier` per retry up to `maxMs`, and
 * `jitter` spreads each wait over `[d × (1 − jitter), d]` so that callers who
 * failed together do not retry together.
 *
 * @publicApi
 */
export interface RetryBackoffOptions {
  /** The wait before the first retry. Default 100. */
  initialMs?: number;
  /** Each retry waits this many times longer than the last. Default 2. */
  multiplier?: number;
  /** The longest wait. Default 5,000. */
  maxMs?: number;
  /** Share of each wait drawn at random, in [0, 1]. Default 0.5. */
  jitter?: number;
}

/**
 * The retry budget, shared by every caller that retries through one breaker:
 * over the last 10 s, retries may be at most `ratio` of the calls made
 * through a retry policy, plus `minPerSecond` per second (so that a quiet
 * dependency may still be retried), as gRPC's `retryThrottling` and
 * Finagle's `RetryBudget` do. A fleet of clients cannot turn an outage into
 * a retry storm: past the budget, a failure reaches its caller at once.
 *
 * @publicApi
 */
export interface RetryBudgetOptions {
  /** Retries as a share of calls, in [0, 1]. Default 0.1. */
  ratio?: number;
  /** Retries always allowed per second, whatever the ratio. Default 1. */
  minPerSecond?: number;
}

/**
 * Breaker-aware retry (`withRetry()`, and `@CircuitBreaker({ retry })`): a
 * breaker's rejection is never retried; a failure is retried only when the
 * breaker's classification calls it a failure or an overload (a 400, a
 * caller's abort, a success are not); a `Retry-After` is waited out as
 * given; every retry draws from the breaker's retry budget.
 *
 * @publicApi
 */
export interface RetryOptions {
  /** How many times the call may be made in all, the first included (2 = one retry), up to 10. */
  attempts: number;
  backoff?: RetryBackoffOptions;
  /** The budget retries draw from; `false` for none (only `attempts` limits retries). */
  budget?: RetryBudgetOptions | false;
  /** A `Retry-After` longer than this ends the retries: the caller gets the failure at once. Default 30,000. */
  maxRetryAfterMs?: number;
}

/** @internal */
export interface ResolvedRetryOptions {
  readonly attempts: number;
  readonly initialMs: number;
  readonly multiplier: number;
  readonly maxMs: number;
  readonly jitter: number;
  /** `undefined`: no budget. */
  readonly budget: { readonly ratio: number; readonly minPerSecond: number } | undefined;
  readonly maxRetryAfterMs: number;
}

/** @publicApi */
export const RETRY_DEFAULTS = Object.freeze({
  initialMs: 100,
  multiplier: 2,
  maxMs: 5_000,
  jitter: 0.5,
  budgetRatio: 0.1,
  budgetMinPerSecond: 1,
  maxRetryAfterMs: 30_000,
});

const MAX_ATTEMPTS = 10;
const EXPECTED = '{ attempts, backoff?, budget?, maxRetryAfterMs? }';

/**
 * Checks retry options; every error names the subject and the option as
 * `<prefix>retry.<option>`. @internal
 */
export function resolveRetryOptions(check: OptionChecker, given: unknown): ResolvedRetryOptions {
  const options = check.record(
    'retry',
    given,
    ['attempts', 'backoff', 'budget', 'maxRetryAfterMs'],
    `an object ${EXPECTED}`,
    false,
  );
  const attempts = check.number(
    'retry.attempts',
    options.attempts,
    { min: 1, max: MAX_ATTEMPTS, integer: true },
    `an integer in [1, ${MAX_ATTEMPTS}]`,
    false,
  );
  const backoff =
    options.backoff === undefined
      ? {}
      : check.record(
          'retry.backoff',
          options.backoff,
          ['initialMs', 'multiplier', 'maxMs', 'jitter'],
          'an object { initialMs?, multiplier?, maxMs?, jitter? }',
        );
  const delay = (key: string, value: unknown, fallback: number) =>
    check.number(
      `retry.backoff.${key}`,
      or(value, fallback),
      { min: 0, max: MAX_TIMER_MS },
      `a number of milliseconds in [0, ${MAX_TIMER_MS}]`,
    );
  const initialMs = delay('initialMs', backoff.initialMs, RETRY_DEFAULTS.initialMs);
  const maxMs = delay('maxMs', backoff.maxMs, Math.max(RETRY_DEFAULTS.maxMs, initialMs));
  if (maxMs < initialMs)
    check.fail(
      'retry.backoff.maxMs',
      breakerOptionMessages.retryCapBelowFirst(
        check.pathOf('retry.backoff.maxMs'),
        maxMs,
        check.pathOf('retry.backoff.initialMs'),
        initialMs,
      ),
    );
  const multiplier = check.number(
    'retry.backoff.multiplier',
    or(backoff.multiplier, RETRY_DEFAULTS.multiplier),
    { min: 1, max: 1_000 },
    'a number in [1, 1000]',
  );
  const jitter = check.number(
    'retry.backoff.jitter',
    or(backoff.jitter, RETRY_DEFAULTS.jitter),
    { min: 0, max: 1 },
    'a number in [0, 1]',
  );
  let budget: ResolvedRetryOptions['budget'];
  if (options.budget !== false) {
    const ratios =
      options.budget === undefined
        ? {}
        : check.record(
            'retry.budget',
            options.budget,
            ['ratio', 'minPerSecond'],
            'an object { ratio?, minPerSecond? } or false',
          );
    budget = Object.freeze({
      ratio: check.number(
        'retry.budget.ratio',
        or(ratios.ratio, RETRY_DEFAULTS.budgetRatio),
        { min: 0, max: 1 },
        'a number in [0, 1]',
      ),
      minPerSecond: check.number(
        'retry.budget.minPerSecond',
        or(ratios.minPerSecond, RETRY_DEFAULTS.budgetMinPerSecond),
        { min: 0, max: 1_000_000 },
        'a number in [0, 1000000]',
      ),
    });
  }
  const maxRetryAfterMs = check.number(
    'retry.maxRetryAfterMs',
    or(options.maxRetryAfterMs, RETRY_DEFAULTS.maxRetryAfterMs),
    { min: 0, max: MAX_TIMER_MS },
    `a number of milliseconds in [0, ${MAX_TIMER_MS}]`,
  );
  return Object.freeze({
    attempts,
    initialMs,
    multiplier,
    maxMs,
    jitter,
    budget,
    maxRetryAfterMs,
  });
}
