import { Breaker, type ExecuteOptions } from '../breaker.js';
import type { RetryEvent } from '../events/breaker-events.js';
import type { AdmissionPeek } from '../state/admission-peek.interface.js';
import type { CallOutcome } from '../state/breaker-state.js';
import { isCallRejected } from '../errors/breaker.errors.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import { retryAfterOf } from '../classify/classify.js';
import { breakerOptionChecker, type ResolvedBreakerOptions } from '../options/resolve-options.js';
import { timerDelay } from '../calls/timer-delay.js';
import type { ProtectedCall } from '../calls/tracked-call.js';
import { budgetOf, type RetryBudget } from './retry-budget.js';
import {
  resolveRetryOptions,
  type ResolvedRetryOptions,
  type RetryOptions,
} from './retry-options.js';

/** What a retry policy needs of its breaker (every `Breaker` is one). @internal */
export interface RetryTarget {
  readonly config: ResolvedBreakerOptions;
  readonly clock: { now(): number };
  monotonic(): number;
  classifyError(error: unknown, config?: ResolvedBreakerOptions): CallOutcome;
  classifyResult(value: unknown, config?: ResolvedBreakerOptions): CallOutcome;
  peek(): AdmissionPeek;
  /** @internal */
  recordRetry(event: RetryEvent): void;
  /** @internal */
  draw(): number;
}

/** A breaker whose calls are retried by a policy. @publicApi */
export interface RetryingBreaker {
  readonly breaker: Breaker;
  /** `breaker.execute(fn, options)`, retried as the policy says; the caller's signal also ends a wait between attempts. */
  execute<T>(fn: ProtectedCall<T>, options?: ExecuteOptions): Promise<T>;
}

/**
 * Breaker-aware retry: wraps `breaker.execute()` so that a failure the
 * breaker's classification calls retryable (a failure or an overload) is
 * tried again, after the dependency's `Retry-After` when it gave one and a
 * jittered backoff otherwise, within the breaker's retry budget. A rejection
 * by the breaker (`isCallRejected()`: open, bulkhead full, ramping up...)
 * is never retried, and neither is a 400, a success or the caller's abort.
 * Options are checked here, with errors naming the breaker and `retry.<option>`.
 *
 * @publicApi
 */
export function withRetry(breaker: Breaker, options: RetryOptions): RetryingBreaker {
  if (!(breaker instanceof Breaker)) throw new TypeError(breakerMessages.notABreaker(breaker));
  const policy = resolveRetryOptions(breakerOptionChecker(breaker.name), options);
  // Looked up once: every call of this policy draws from the same budget.
  const budget = policy.budget === undefined ? undefined : budgetOf(breaker, breaker.monotonic());
  return {
    breaker,
    execute: (fn, executeOptions) =>
      retryCall(
        breaker,
        // Each attempt on the key's child as it is then: one evicted meanwhile shares no bulkhead with it.
        () => breaker.rejoined().execute(fn, executeOptions),
        policy,
        executeOptions?.signal,
        budget,
      ),
  };
}

/**
 * Makes `attempt()` until it succeeds, fails for good, or the policy says
 * stop: then the caller gets the last attempt's own outcome (its error, or
 * the value it resolved with). Each attempt is judged by the options in force
 * as it began (when it is admitted, unless it waits for a bulkhead slot), as
 * the breaker counts it, whatever `reconfigure()` puts in force meanwhile. @internal
 */
export function retryCall<T>(
  breaker: RetryTarget,
  attempt: () => Promise<T>,
  policy: ResolvedRetryOptions,
  signal: AbortSignal | undefined,
  budget = policy.budget === undefined ? undefined : budgetOf(breaker, breaker.monotonic()),
): Promise<T> {
  budget?.deposit(breaker.monotonic());
  const config = breaker.config;
  // The first attempt without an async function of its own: most calls succeed, and pay for one promise only.
  return attempt().then(
    (value) =>
      policy.attempts > 1 && retryableValue(breaker, config, value)
        ? retryAfter(breaker, attempt, policy, signal, budget, { value, threw: false })
        : value,
    (error: unknown) => {
      if (!mayRetry(breaker, config, policy, 1, signal, error)) throw error;
      return retryAfter(breaker, attempt, policy, signal, budget, { value: error, threw: true });
    },
  );
}

/** What an attempt produced: the value it resolved with, or (`threw`) its error. */
interface Produced {
  readonly value: unknown;
  readonly threw: boolean;
}

/** The retries after a first attempt that failed retryably, until one succeeds or the policy says stop. */
async function retryAfter<T>(
  breaker: RetryTarget,
  attempt: () => Promise<T>,
  policy: ResolvedRetryOptions,
  signal: AbortSignal | undefined,
  budget: RetryBudget | undefined,
  first: Produced,
): Promise<T> {
  let last = first;
  for (let made = 1; ; made++) {
    const delayMs = withPause(breaker, policy, delayBefore(breaker, policy, made, last.value));
    const granted =
      delayMs !== undefined &&
      (budget === undefined ||
        budget.withdraw(breaker.monotonic(), policy.budget!.ratio, policy.budget!.minPerSecond));
    if (delayMs !== undefined)
      breaker.recordRetry({
        attempt: made + 1,
        delayMs,
        error: last.value,
        result: granted ? 'scheduled' : 'budget-exhausted',
      });
    if (!granted) {
      if (last.threw) throw last.value;
      return last.value as T;
    }
    await sleep(delayMs!, signal);
    await waitOutSlack(breaker, signal);
    // Judged by the options in force as it began, whatever reconfigure() puts in force meanwhile.
    const config = breaker.config;
    try {
      const value = await attempt();
      if (made + 1 >= policy.attempts || !retryableValue(breaker, config, value)) return value;
      last = { value, threw: false };
    } catch (error) {
      if (!mayRetry(breaker, config, policy, made + 1, signal, error)) throw error;
      last = { value: error, threw: true };
    }
  }
}

/** Whether an attempt's error may be retried: attempts left, not a rejection by the breaker, not the caller's abort, a failure. */
function mayRetry(
  breaker: RetryTarget,
  config: ResolvedBreakerOptions,
  policy: ResolvedRetryOptions,
  made: number,
  signal: AbortSignal | undefined,
  error: unknown,
): boolean {
  return (
    made < policy.attempts &&
    !isCallRejected(error) &&
    signal?.aborted !== true &&
    retryable(breaker.classifyError(error, config))
  );
}

function retryable(outcome: CallOutcome): boolean {
  return outcome === 'failure' || outcome === 'overload';
}

/** A resolved value the breaker counts as failed (a 503 `Response`); only objects can be one by default. */
function retryableValue(
  breaker: RetryTarget,
  config: ResolvedBreakerOptions,
  value: unknown,
): boolean {
  if (config.classifyResult === undefined && (typeof value !== 'object' || value === null))
    return false;
  return retryable(breaker.classifyResult(value, config));
}

/** The dependency's `Retry-After` when it gave one (`undefined` past `maxRetryAfterMs`: stop), else the backoff. */
function delayBefore(
  breaker: RetryTarget,
  policy: ResolvedRetryOptions,
  made: number,
  failure: unknown,
): number | undefined {
  const hint = retryAfterOf(failure, breaker.clock.now());
  if (hint !== undefined && hint > 0) return hint > policy.maxRetryAfterMs ? undefined : hint;
  const base = Math.min(policy.maxMs, policy.initialMs * policy.multiplier ** (made - 1));
  return Math.round(base * (1 - policy.jitter * breaker.draw()));
}

// How many times a retry waits again for a pause's last milliseconds, and how early a timer may fire against the clock.
const MAX_SLACK_WAITS = 8;
const TIMER_SLACK_MS = 4;

/**
 * The wait before a retry, once the breaker's own `Retry-After` pause is
 * counted: a pause (maybe begun by another call's 429) longer than the
 * policy's `maxRetryAfterMs` stops retrying, as a hint of the failure's own
 * would; a shorter one longer than the backoff becomes the wait, so that the
 * `retry` event says how long the retry really waits.
 */
function withPause(
  breaker: RetryTarget,
  policy: ResolvedRetryOptions,
  delayMs: number | undefined,
): number | undefined {
  if (delayMs === undefined) return undefined;
  const pause = pauseLeft(breaker.peek());
  // The slack: the failure's own hint and the pause it began are read on two clocks.
  if (pause > policy.maxRetryAfterMs + TIMER_SLACK_MS) return undefined;
  return pause > delayMs + TIMER_SLACK_MS ? Math.ceil(pause) : delayMs;
}

/**
 * After the wait, absorbs only a timer's slack: the process's timers start
 * from a cached, whole-millisecond loop time, while the pause runs on the
 * breaker's monotonic reading, so a timer of the pause's length can fire a
 * little before the pause ends. A longer remainder (a pause begun during the
 * wait, or a clock that does not move) is not waited: the attempt then gets
 * the breaker's answer. Bounded, so that no caller waits for ever on a clock
 * that stands still.
 */
async function waitOutSlack(breaker: RetryTarget, signal: AbortSignal | undefined): Promise<void> {
  for (let waits = 0; waits < MAX_SLACK_WAITS; waits++) {
    const left = pauseLeft(breaker.peek());
    if (left <= 0 || left > TIMER_SLACK_MS) return;
    await sleep(left, signal);
  }
}

function pauseLeft(peek: AdmissionPeek): number {
  return !peek.permitted && peek.reason === 'retry-after' ? (peek.retryAfterMs ?? 0) : 0;
}

/** Waits `ms`, or rejects with the caller's abort reason; the timer never keeps a process alive. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, timerDelay(ms));
    timer.unref?.();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
