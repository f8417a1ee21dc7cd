import { closestName } from '../options/closest-name.js';
import type { Deadline, DeadlineScheduler } from '../calls/deadline-scheduler.js';
import { faultInjectionMessages as messages } from './fault-injection.messages.js';
import { InjectedFaultError } from './injected-fault.error.js';
import { MAX_TIMER_MS } from '../options/option-values.js';
import { drawFrom, SAFE_DRAW } from '../ports/random-draw.js';

/**
 * A fault for `breaker.injectFault()` (the role of Polly's chaos strategies):
 * what the breaker makes its calls see instead of the dependency's answer.
 * Latency comes first, then the failure or the overload; latency alone delays
 * the real call.
 *
 * @publicApi
 */
export interface FaultInjectionOptions {
  /**
   * The call fails without reaching the dependency: `true` for an
   * `InjectedFaultError`, or what to throw (an error of yours, such as an
   * `UpstreamHttpError` with a 503; or a function making one per call).
   */
  fail?: boolean | object | (() => unknown);
  /**
   * The call waits this long first, on the breaker's clock (a manual clock in
   * tests), within its deadline: a latency longer than `timeoutMs` is a
   * timeout. A decorated method not known to return a Promise or an
   * Observable cannot wait, and ignores it.
   */
  latencyMs?: number;
  /** The call is refused as overloaded (a 429, with this `Retry-After`) without reaching the dependency. */
  overload?: { retryAfterMs?: number };
  /**
   * The share of admitted calls that get the fault, in (0, 1]. Default 1.
   * Without `random`, spread evenly and deterministically: the first call,
   * then one in every `1 / rate` (0.25: calls 1, 5, 9, ...).
   */
  rate?: number;
  /**
   * Draws in [0, 1) (a seeded generator): a call gets the fault when its draw
   * is below `rate`. A draw that throws or falls outside counts as 0.5,
   * reported once per injection.
   */
  random?: () => number;
}

/**
 * An injected fault in place, as `injectFault()` returns it.
 *
 * @publicApi
 */
export interface InjectedFault {
  /** How many calls got the fault so far. */
  readonly injected: number;
  /** Whether the fault is still in place (false after `remove()`, or once another injection replaced it). */
  readonly active: boolean;
  /** Removes the fault: calls reach the dependency again. A call already given the fault keeps it. */
  remove(): void;
}

/** An injected fault as snapshots show it. @publicApi */
export interface InjectedFaultSnapshot {
  /** Calls fail (with an `InjectedFaultError` or the error given). */
  fail: boolean;
  /** Calls are refused as overloaded, with this pause. */
  overload?: { retryAfterMs?: number };
  latencyMs: number;
  rate: number;
  /** Whether `rate` draws from a random source of its own instead of spreading evenly. */
  drawn: boolean;
  /** How many calls got the fault so far. */
  injected: number;
}

interface CheckedFault {
  readonly fail: true | object | (() => unknown) | undefined;
  readonly latencyMs: number;
  readonly overload: { readonly retryAfterMs: number | undefined } | undefined;
  readonly rate: number;
  readonly random: (() => number) | undefined;
}

const RANDOM_SOURCE = 'injectFault() option "random"';
const KEYS = new Set(['fail', 'latencyMs', 'overload', 'rate', 'random']);
// A rate such as 0.1 multiplied out is not exact: 3 * 0.1 is 0.30000000000000004.
const EPSILON = 1e-9;

/**
 * One injected fault, held by the breaker it was injected into (and, for a
 * per-key family, by each of its children): decides which admitted calls get
 * it, and makes the call's work into the fault.
 *
 * @internal
 */
export class FaultPlan implements InjectedFault {
  injected = 0;
  active = true;
  private seen = 0;
  private reported = false;

  constructor(
    private readonly breakerName: string,
    private readonly fault: CheckedFault,
    private readonly withdraw: (plan: FaultPlan) => void,
  ) {}

  remove(): void {
    if (!this.active) return;
    this.active = false;
    this.withdraw(this);
  }

  snapshot(): InjectedFaultSnapshot {
    const { fail, overload, latencyMs, rate, random } = this.fault;
    return {
      fail: fail !== undefined,
      ...(overload === undefined
        ? {}
        : {
            overload:
              overload.retryAfterMs === undefined ? {} : { retryAfterMs: overload.retryAfterMs },
          }),
      latencyMs,
      rate,
      drawn: random !== undefined,
      injected: this.injected,
    };
  }

  /** Whether the call being admitted gets the fault; `breaker` hears of a faulty draw (once per injection). */
  applies(breaker: { reportHookError(source: string, error: Error): void }): boolean {
    const { rate, random } = this.fault;
    const n = ++this.seen;
    const hit =
      rate === 1 ||
      (random === undefined
        ? Math.ceil(n * rate - EPSILON) > Math.ceil((n - 1) * rate - EPSILON)
        : this.draw(random, breaker) < rate);
    if (hit) this.injected++;
    return hit;
  }

  private draw(
    random: () => number,
    breaker: { reportHookError(source: string, error: Error): void },
  ) {
    const drawn = drawFrom(random, this.breakerName, RANDOM_SOURCE);
    if (typeof drawn === 'number') return drawn;
    if (!this.reported) breaker.reportHookError(RANDOM_SOURCE, drawn);
    this.reported = true;
    return SAFE_DRAW;
  }

  /**
   * The faulted call's work: the latency (ended early by `signal`; skipped
   * when the caller cannot wait, a synchronous method), then the failure, or
   * else the real `work`.
   */
  perform<T>(
    signal: AbortSignal | undefined,
    scheduler: DeadlineScheduler,
    work: () => T | PromiseLike<T>,
    synchronous = false,
  ): T | PromiseLike<T> {
    if (this.fault.latencyMs === 0 || synchronous) return this.after(work);
    return wait(scheduler, this.fault.latencyMs, signal).then(() => {
      // The deadline (or a release) may come in the same timer pass as the latency's end, after it.
      if (signal?.aborted) throw signal.reason;
      return this.after(work);
    });
  }

  private after<T>(work: () => T | PromiseLike<T>): T | PromiseLike<T> {
    const { fail, overload } = this.fault;
    if (overload !== undefined)
      throw new InjectedFaultError(this.breakerName, 'overload', overload.retryAfterMs);
    if (fail === undefined) return work();
    if (fail === true) throw new InjectedFaultError(this.breakerName, 'failure');
    throw typeof fail === 'function' ? (fail as () => unknown)() : fail;
  }
}

/** Waits `ms` on `scheduler` (the breaker's clock when it has timers); an abort of `signal` ends the wait with its reason. */
function wait(
  scheduler: DeadlineScheduler,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      scheduler.remove(timer);
      reject(signal!.reason);
    };
    const timer: Deadline = {
      dueAt: 0,
      prev: undefined,
      next: undefined,
      queue: undefined,
      expire: () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    scheduler.add(timer, ms);
  });
}

/** Checks what `injectFault()` was given, before anything changes. @internal */
export function checkFault(breaker: string, given: unknown): CheckedFault {
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new TypeError(messages.badFault(breaker, given));
  const options = given as Record<string, unknown>;
  for (const key of Object.keys(options))
    if (!KEYS.has(key))
      throw new TypeError(messages.unknownKey(breaker, key, closestName(key, KEYS)));
  const bad = (option: string, value: unknown, expected: string): never => {
    throw new TypeError(messages.badOption(breaker, option, value, expected));
  };
  const { fail, latencyMs, overload, rate, random } = options;
  if (
    fail !== undefined &&
    typeof fail !== 'boolean' &&
    typeof fail !== 'function' &&
    (typeof fail !== 'object' || fail === null)
  )
    bad('fail', fail, 'true, an error to throw, or a function making one');
  if (latencyMs !== undefined && !isDuration(latencyMs))
    bad('latencyMs', latencyMs, `a number of milliseconds from 0 to ${MAX_TIMER_MS}`);
  let retryAfterMs: number | undefined;
  if (overload !== undefined) {
    if (typeof overload !== 'object' || overload === null || Array.isArray(overload))
      bad('overload', overload, 'an object { retryAfterMs? }');
    for (const key of Object.keys(overload as object))
      if (key !== 'retryAfterMs') bad(`overload.${key}`, key, 'left out (only retryAfterMs)');
    retryAfterMs = (overload as { retryAfterMs?: unknown }).retryAfterMs as number | undefined;
    if (retryAfterMs !== undefined && !isDuration(retryAfterMs))
      bad('overload.retryAfterMs', retryAfterMs, 'a number of milliseconds, 0 or more');
  }
  if (rate !== undefined && (typeof rate !== 'number' || !(rate > 0 && rate <= 1)))
    bad('rate', rate, 'a number in (0, 1]');
  if (random !== undefined && typeof random !== 'function')
    bad('random', random, 'a function returning a number in [0, 1)');
  const failing = fail !== undefined && fail !== false;
  if (failing && overload !== undefined) throw new TypeError(messages.failAndOverload(breaker));
  if (!failing && overload === undefined && (latencyMs === undefined || latencyMs === 0))
    throw new TypeError(messages.nothingToInject(breaker));
  return {
    fail: failing ? (fail as true | object) : undefined,
    latencyMs: (latencyMs as number | undefined) ?? 0,
    overload: overload === undefined ? undefined : { retryAfterMs },
    rate: (rate as number | undefined) ?? 1,
    random: random as (() => number) | undefined,
  };
}

function isDuration(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_TIMER_MS;
}
