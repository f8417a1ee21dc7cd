import type { CallRejectedError } from '../errors/breaker.errors.js';
import { createRejection } from '../errors/breaker.errors.js';
import { environmentOf, type BreakerDeps } from '../ports/breaker-environment.js';
import type { DeadlineScheduler } from '../calls/deadline-scheduler.js';
import { CRITICALITIES, isCriticality, rankOf, type Criticality } from './criticality.js';
import type { LimitAlgorithm } from './limit-algorithm.js';
import { limitAlgorithmOf } from './limit-algorithm-of.js';
import {
  resolveLimitOptions,
  type ConcurrencyLimitOptions,
  type ResolvedLimitOptions,
} from './limit-options.js';
import { EVICTED, GRANTED, LimitQueue, TIMED_OUT, Waiter, type WaitEnd } from './limit-queue.js';
import type { ConcurrencyLimitSnapshot } from './limit-snapshot.js';
import { limitMessages } from './limit.messages.js';

/** How long after its last shed request a limiter still reports `shedding`. */
const SHEDDING_MS = 10_000;

/**
 * A place held by a request: settle it once, when the request ends. A second
 * settlement does nothing, so that an error handler and a `finally` may both
 * settle it.
 *
 * @publicApi
 */
export interface LimitPermit {
  /** It ended normally: its time is a latency measurement for the limit. */
  succeed(): void;
  /** It ended with an overload sign (a timeout, a refusal for overload downstream): the limit backs off. */
  drop(): void;
  /** It ended without a measurement (a client error, a cancelled request): only its place is freed. */
  release(): void;
}

const SUCCEEDED = 0;
const DROPPED = 1;
const RELEASED = 2;

/** A place taken: what it measures, and who frees it. */
class Place implements LimitPermit {
  private settled = false;

  constructor(
    private readonly limiter: ConcurrencyLimiter,
    readonly startedAt: number,
    readonly inFlight: number,
  ) {}

  succeed(): void {
    this.end(SUCCEEDED);
  }

  drop(): void {
    this.end(DROPPED);
  }

  release(): void {
    this.end(RELEASED);
  }

  private end(how: number): void {
    if (this.settled) return;
    this.settled = true;
    this.limiter.ended(this, how);
  }
}

/**
 * A concurrency limit in front of work: how many requests may run at once,
 * found by an algorithm that follows the service (or fixed), and what
 * happens beyond it. A request beyond the limit is shed at once, or waits in
 * a bounded queue for `queueTimeoutMs`; a freed place goes to the most
 * important request waiting, and a full queue gives up its least important
 * request for a more important one. A shed request gets a
 * `CallRejectedError` with reason `shed` and code `LOAD_SHED`, without
 * `retryAfterMs`: the package's exception filter answers it with 503 and the
 * header `circuit-breaker-code: LOAD_SHED`, which a calling breaker counts as
 * overload (evidence for its client-side throttling), not as a failure and
 * not as a pause for every call.
 *
 * No timer of its own: queue timeouts wait in the deadline scheduler of its
 * clock, as a breaker's deadlines do.
 *
 * @publicApi
 */
export class ConcurrencyLimiter {
  readonly name: string;
  private readonly options: ResolvedLimitOptions;
  private readonly algorithm: LimitAlgorithm;
  private readonly monotonic: () => number;
  private readonly deadlines: DeadlineScheduler;
  private readonly queue = new LimitQueue();
  private inFlight = 0;
  private admitted = 0;
  private shed = 0;
  private readonly shedBy: Record<Criticality, number> = {
    'critical-plus': 0,
    critical: 0,
    'sheddable-plus': 0,
    sheddable: 0,
  };
  private lastShedAt = -Infinity;
  private readonly expire = (waiter: Waiter): void => {
    // The scheduler expires a batch: an earlier expiry of it may have granted this waiter, or aborted its wait.
    if (this.queue.remove(waiter)) waiter.settle(TIMED_OUT);
  };

  constructor(name: string, options?: ConcurrencyLimitOptions, deps?: BreakerDeps) {
    if (typeof name !== 'string' || name === '') throw new TypeError(limitMessages.badName(name));
    this.name = name;
    this.options = resolveLimitOptions(name, options);
    const env = environmentOf(name, deps);
    this.monotonic = env.monotonic;
    this.deadlines = env.deadlines;
    this.algorithm = limitAlgorithmOf(this.options);
  }

  /** A place now, or the refusal (`shed`); never waits, whatever `maxQueue` says. */
  tryAcquire(criticality: Criticality = 'critical'): LimitPermit | CallRejectedError {
    this.check(criticality);
    if (this.inFlight < this.algorithm.limit) return this.take();
    return this.refuse(criticality);
  }

  /**
   * A place now (a permit, not a promise), or a wait for one when `maxQueue`
   * allows (a promise): it ends with a permit, or rejects with the `shed`
   * refusal (the queue full, its timeout, or a more important request took
   * its place), or with the signal's reason when it aborts.
   */
  acquire(
    criticality: Criticality = 'critical',
    signal?: AbortSignal,
  ): LimitPermit | Promise<LimitPermit> {
    this.check(criticality);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.inFlight < this.algorithm.limit) return this.take();
    const rank = rankOf(criticality);
    if (this.queue.size >= this.options.maxQueue) {
      const evicted = this.queue.newestBelow(rank);
      if (evicted === undefined) return Promise.reject(this.refuse(criticality));
      this.queue.remove(evicted);
      this.deadlines.remove(evicted);
      evicted.settle(EVICTED);
    }
    return this.wait(rank, criticality, signal);
  }

  /**
   * @internal Whether a request would take a place at once, without a
   * snapshot: the Nest layer asks before it makes an abort signal (a few
   * microseconds on Node 20) for a request that may wait.
   */
  get hasFreePlace(): boolean {
    return this.inFlight < this.algorithm.limit;
  }

  /** @internal Whether a request may wait for a place (`maxQueue` > 0). */
  get mayQueue(): boolean {
    return this.options.maxQueue > 0;
  }

  snapshot(): ConcurrencyLimitSnapshot {
    return {
      name: this.name,
      algorithm: this.options.algorithm,
      limit: this.algorithm.limit,
      inFlight: this.inFlight,
      queued: this.queue.size,
      maxQueue: this.options.maxQueue,
      admitted: this.admitted,
      shed: this.shed,
      shedBy: { ...this.shedBy },
      shedding: this.monotonic() - this.lastShedAt < SHEDDING_MS,
    };
  }

  /** @internal A place's request ended: it measures, frees the place, and lets waiters in. */
  ended(place: Place, how: number): void {
    this.inFlight--;
    if (how !== RELEASED) {
      const now = this.monotonic();
      this.algorithm.sample(
        place.startedAt,
        now - place.startedAt,
        place.inFlight,
        how === DROPPED,
      );
    }
    while (this.queue.size > 0 && this.inFlight < this.algorithm.limit) {
      const waiter = this.queue.shift()!;
      this.deadlines.remove(waiter);
      waiter.settle(GRANTED);
    }
  }

  private take(): Place {
    this.admitted++;
    return new Place(this, this.monotonic(), ++this.inFlight);
  }

  private refuse(criticality: Criticality): CallRejectedError {
    this.shed++;
    this.shedBy[criticality]++;
    this.lastShedAt = this.monotonic();
    // No pause to ask of callers: a place frees as soon as a request ends (as a full bulkhead's).
    return createRejection(this.name, 'closed', 'shed', undefined, undefined);
  }

  private wait(
    rank: number,
    criticality: Criticality,
    signal: AbortSignal | undefined,
  ): Promise<LimitPermit> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.queue.remove(waiter);
        this.deadlines.remove(waiter);
        reject(signal!.reason);
      };
      const waiter = new Waiter(
        rank,
        criticality,
        (how: WaitEnd) => {
          signal?.removeEventListener('abort', onAbort);
          if (how === GRANTED) resolve(this.take());
          else reject(this.refuse(criticality));
        },
        this.expire,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.deadlines.add(waiter, this.options.queueTimeoutMs);
    });
  }

  private check(criticality: unknown): void {
    if (!isCriticality(criticality))
      throw new TypeError(limitMessages.badCriticality(this.name, criticality, CRITICALITIES));
  }
}
