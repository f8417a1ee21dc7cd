import { breakerOptionMessages } from '../options/breaker-options.messages.js';
import type { OptionChecker } from '../options/option-checker.js';
import { applyOptionRules, optionTable } from '../options/option-rules.js';
import { MAX_TIMER_MS, numberIn, UNIT } from '../options/option-values.js';

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

/** The fields the retry table resolves. */
interface RetryFields {
  attempts: number;
  initialMs: number;
  maxMs: number;
  multiplier: number;
  jitter: number;
  budgetRatio: number;
  budgetMinPerSecond: number;
  maxRetryAfterMs: number;
}
interface RetryGiven {
  readonly budget?: unknown;
}

const DELAY = numberIn(
  { min: 0, max: MAX_TIMER_MS },
  `a number of milliseconds in [0, ${MAX_TIMER_MS}]`,
);

/** Retry's options, in the order they are checked; every message names them as `retry.<option>`. */
const RETRY_TABLE = optionTable<RetryFields, RetryGiven>('retry.', [
  {
    option: 'attempts',
    field: 'attempts',
    check: numberIn(
      { min: 1, max: MAX_ATTEMPTS, integer: true },
      `an integer in [1, ${MAX_ATTEMPTS}]`,
    ),
    required: true,
  },
  {
    option: 'backoff',
    known: ['initialMs', 'multiplier', 'maxMs', 'jitter'],
    expected: 'an object { initialMs?, multiplier?, maxMs?, jitter? }',
  },
  {
    option: 'backoff.initialMs',
    field: 'initialMs',
    check: DELAY,
    default: RETRY_DEFAULTS.initialMs,
  },
  {
    option: 'backoff.maxMs',
    field: 'maxMs',
    check: DELAY,
    derive: (fields) => Math.max(RETRY_DEFAULTS.maxMs, fields.initialMs),
  },
  {
    option: 'backoff.maxMs',
    conflicts: (fields) => fields.maxMs < fields.initialMs,
    message: (check, fields) =>
      breakerOptionMessages.retryCapBelowFirst(
        check.pathOf('retry.backoff.maxMs'),
        fields.maxMs,
        check.pathOf('retry.backoff.initialMs'),
        fields.initialMs,
      ),
  },
  {
    option: 'backoff.multiplier',
    field: 'multiplier',
    check: numberIn({ min: 1, max: 1_000 }, 'a number in [1, 1000]'),
    default: RETRY_DEFAULTS.multiplier,
  },
  { option: 'backoff.jitter', field: 'jitter', check: UNIT, default: RETRY_DEFAULTS.jitter },
  {
    option: 'budget',
    known: ['ratio', 'minPerSecond'],
    expected: 'an object { ratio?, minPerSecond? } or false',
    asIs: [false],
  },
  {
    option: 'budget.ratio',
    field: 'budgetRatio',
    check: UNIT,
    default: RETRY_DEFAULTS.budgetRatio,
  },
  {
    option: 'budget.minPerSecond',
    field: 'budgetMinPerSecond',
    check: numberIn({ min: 0, max: 1_000_000 }, 'a number in [0, 1000000]'),
    default: RETRY_DEFAULTS.budgetMinPerSecond,
  },
  {
    option: 'maxRetryAfterMs',
    field: 'maxRetryAfterMs',
    check: DELAY,
    default: RETRY_DEFAULTS.maxRetryAfterMs,
  },
]);

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
  const fields = applyOptionRules(check, RETRY_TABLE, options);
  return Object.freeze({
    attempts: fields.attempts,
    initialMs: fields.initialMs,
    multiplier: fields.multiplier,
    maxMs: fields.maxMs,
    jitter: fields.jitter,
    budget:
      options.budget === false
        ? undefined
        : Object.freeze({ ratio: fields.budgetRatio, minPerSecond: fields.budgetMinPerSecond }),
    maxRetryAfterMs: fields.maxRetryAfterMs,
  });
}
