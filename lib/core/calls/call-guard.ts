import type { BreakerSnapshot } from '../snapshot/breaker-snapshot.js';
import {
  CLOSED,
  HALF_OPEN,
  ISOLATED,
  OPEN,
  type BreakerState,
  type RejectionReason,
  type StateCode,
  type TransitionReason,
} from '../state/breaker-state.js';
import type { DeadlineScheduler } from './deadline-scheduler.js';
import type { HealthCheckScheduler } from '../recovery/health-check-scheduler.js';
import { HealthCheck, type HealthCheckHost } from '../recovery/health-check.js';
import type { CircuitOpenError } from '../errors/breaker.errors.js';
import { Bulkhead, DISMISSED, GRANTED, type BulkheadLimits } from '../overload/bulkhead.js';
import { RampUp } from '../overload/ramp-up.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import type { CallPermit, ProtectedCall, WithSignal } from './tracked-call.js';
import type { OutcomeWindow } from '../window/outcome-window.interface.js';
import { deferredRejection } from './deferred-rejection.js';
import {
  pass,
  passAcquire,
  passHolding,
  passMethod,
  passMethodHolding,
  type RoutedBreaker,
} from './call-routes.js';

/** Closings that end a recovery, which a slow start follows; a reset or a release by hand asks for full traffic. */
const RECOVERED: readonly TransitionReason[] = ['probes-succeeded', 'shared-close', 'health-check'];

/** What a guard's recovery probe sees of its breaker. @internal */
export interface GuardHost extends HealthCheckHost {
  readonly lastDecidedState: BreakerState;
  /** Where its per-call deadlines wait (the clock's timers when it has them): its queue timeouts wait there too. */
  readonly deadlines: DeadlineScheduler;
  healthCheckScheduler(): HealthCheckScheduler;
  /** A family's child: one of its bulkheads holds and awaits no call any more. */
  bulkheadIdle(): void;
  /** A family's overflow child: its family, which counts each key's calls on it. */
  readonly overflowCalls: OverflowCalls | undefined;
}

/** What the overflow child's guard tells its family of each call (see `FamilyTransitions`). @internal */
export interface OverflowCalls {
  claimOverflowCall(): string | undefined;
  overflowCallEnded(key: string): void;
}

/** What a guard sees of its breaker: how to refuse, and its admission past the guard (see `call-routes.ts`). @internal */
export interface GuardedBreaker extends RoutedBreaker {
  monotonic(): number;
  /** Forced `disabled`: every call goes through uncounted, past the bulkhead too. */
  readonly lettingAllThrough: boolean;
  refuse(reason: RejectionReason, retryAfterMs: number | undefined): CircuitOpenError;
  /** The rejection its state (or its family's) gives a call now, counted and announced; none when it may be admitted. */
  stateRefusal(): CircuitOpenError | undefined;
}

/**
 * The guard `config` asks for: `current` kept (with the new options) or a new
 * one, or `undefined` when no option asks for one (then `config.guarded` is
 * false, the one flag a call of such a breaker reads). @internal
 */
export function guardFor(
  config: ResolvedBreakerOptions,
  current: CallGuard | undefined,
  host: GuardHost,
): CallGuard | undefined {
  if (current !== undefined) {
    current.reconfigure(config);
    return current.idle ? undefined : current;
  }
  return config.bulkhead === undefined &&
    config.rampUp === undefined &&
    config.healthCheck === undefined
    ? undefined
    : new CallGuard(config, host);
}

/**
 * What stands in front of a breaker's admission when it has a bulkhead, a
 * slow start or a recovery probe: the concurrency cap and its queue, the ramp
 * after closing, and the probe while open. A breaker without them has none of
 * this (nothing in the WeakMap beside it), so the plain path is unchanged.
 *
 * @internal
 */
export class CallGuard {
  bulkhead: Bulkhead | undefined;
  /** Only while ramping up after a recovery. */
  ramp: RampUp | undefined = undefined;
  private rampOptions: ResolvedBreakerOptions['rampUp'];
  /** Made the first time the breaker opens with a `probe`. */
  private healthCheck: HealthCheck | undefined = undefined;
  private healthCheckOptions: ResolvedBreakerOptions['healthCheck'];
  /** The overflow child's: its family counts each key's calls here, so that a key moves off only when they are over. */
  private readonly overflowCalls: OverflowCalls | undefined;

  constructor(
    config: ResolvedBreakerOptions,
    private readonly host: GuardHost,
  ) {
    this.rampOptions = config.rampUp;
    this.healthCheckOptions = config.healthCheck;
    // Given to an open breaker by reconfigure(): the first health check is one interval from now.
    if (config.healthCheck !== undefined && host.lastDecidedState === 'open')
      this.startHealthCheck(host.monotonic());
    this.bulkhead = config.bulkhead === undefined ? undefined : this.newBulkhead(config.bulkhead);
    this.overflowCalls = host.overflowCalls;
  }

  private newBulkhead(limits: BulkheadLimits): Bulkhead {
    const idle = this.host.parent === undefined ? undefined : this.bulkheadIdle;
    return new Bulkhead(limits, this.host.deadlines, idle);
  }

  private readonly bulkheadIdle = (): void => this.host.bulkheadIdle();

  /** New options: the bulkhead keeps its calls and takes the new limits; dropped, it lets its waiters in. */
  reconfigure(config: ResolvedBreakerOptions): void {
    // A ramp under way keeps the options it started with; without rampUp it ends now.
    this.rampOptions = config.rampUp;
    if (config.rampUp === undefined) this.ramp = undefined;
    const hadHealthCheck = this.healthCheckOptions !== undefined;
    this.healthCheckOptions = config.healthCheck;
    if (config.healthCheck === undefined) {
      this.healthCheck?.stop();
      this.healthCheck = undefined;
    } else if (!hadHealthCheck && this.host.lastDecidedState === 'open') {
      // Given to an open breaker: the first health check is one interval from now.
      this.startHealthCheck(this.host.monotonic());
    }
    const limits = config.bulkhead;
    if (limits === undefined) {
      this.bulkhead?.setLimits({ maxConcurrent: Infinity, maxQueue: 0, queueTimeoutMs: 1 });
      this.bulkhead = undefined;
    } else if (this.bulkhead === undefined) this.bulkhead = this.newBulkhead(limits);
    else this.bulkhead.setLimits(limits);
  }

  /** After every transition of the breaker: a recovery that closes it starts the ramp; anything else ends it. */
  transitioned(to: StateCode, reason: TransitionReason, now: number, reopens: number): void {
    // Opened or forced open: the calls waiting for a slot would be refused at their turn, so they are refused now.
    if ((to === OPEN || to === ISOLATED) && this.bulkhead !== undefined && this.bulkhead.queued > 0)
      this.bulkhead.dismissAll();
    this.ramp =
      to === CLOSED && this.rampOptions !== undefined && RECOVERED.includes(reason)
        ? new RampUp(this.rampOptions, now, reopens)
        : undefined;
    const healthCheck = this.healthCheckOptions;
    if (healthCheck === undefined) return;
    if (to === OPEN) this.startHealthCheck(now);
    // Half-open, a probe may still close the breaker if asked to; in any other state it has nothing to do.
    else if (!(to === HALF_OPEN && healthCheck.onSuccess === 'closed')) this.healthCheck?.stop();
  }

  /** The breaker is gone for good (`dispose()`): its probe must not keep it alive. */
  dispose(): void {
    this.healthCheck?.stop();
  }

  private startHealthCheck(now: number): void {
    (this.healthCheck ??= new HealthCheck(this.host, this.host.healthCheckScheduler())).start(now);
  }

  /** While ramping, a failure rate at the threshold reopens at once, whatever the population. */
  rampTrip(
    config: ResolvedBreakerOptions,
    window: OutcomeWindow,
    now: number,
  ): TransitionReason | undefined {
    const ramp = this.ramp;
    if (ramp === undefined || ramp.ended(now) || !config.rateRule || window.calls === 0)
      return undefined;
    return window.failures / window.calls >= config.failureRateThreshold
      ? 'failure-rate'
      : undefined;
  }

  /** The ramp's refusal of a call arriving now, if it is past the share. */
  private rampRefusal(b: GuardedBreaker): CircuitOpenError | undefined {
    const ramp = this.ramp;
    if (ramp === undefined) return undefined;
    const now = b.monotonic();
    if (ramp.ended(now)) {
      this.ramp = undefined;
      return undefined;
    }
    return ramp.admit(now) ? undefined : b.refuse('ramp-up', ramp.retryAfter(now));
  }

  execute<T>(b: GuardedBreaker, fn: ProtectedCall<T>, signal: AbortSignal | undefined): Promise<T> {
    const key = this.claim();
    if (key === undefined) return this.run(b, fn, signal);
    return this.ended(key, this.run(b, fn, signal));
  }

  private run<T>(
    b: GuardedBreaker,
    fn: ProtectedCall<T>,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const refusal = this.rampRefusal(b);
    if (refusal !== undefined) return deferredRejection(refusal);
    const bulkhead = this.bulkhead;
    if (bulkhead === undefined) return pass(b, fn, signal);
    if (bulkhead.tryEnter()) return passHolding(b, fn, signal, bulkhead.leave);
    if (b.lettingAllThrough) return pass(b, fn, signal);
    return this.queue(b, bulkhead, signal, () => passHolding(b, fn, signal, bulkhead.leave));
  }

  executeMethod<T>(
    b: GuardedBreaker,
    method: (...args: any[]) => T | PromiseLike<T>,
    thisArg: unknown,
    args: unknown[],
    withSignal: WithSignal<T>,
  ): Promise<T> {
    const key = this.claim();
    const call = this.runMethod(b, method, thisArg, args, withSignal);
    return key === undefined ? call : this.ended(key, call);
  }

  private runMethod<T>(
    b: GuardedBreaker,
    method: (...args: any[]) => T | PromiseLike<T>,
    thisArg: unknown,
    args: unknown[],
    withSignal: WithSignal<T>,
  ): Promise<T> {
    const refusal = this.rampRefusal(b);
    if (refusal !== undefined) return deferredRejection(refusal);
    const bulkhead = this.bulkhead;
    if (bulkhead === undefined) return passMethod(b, method, thisArg, args, withSignal);
    const run = () => passMethodHolding(b, method, thisArg, args, withSignal, bulkhead.leave);
    if (bulkhead.tryEnter()) return run();
    if (b.lettingAllThrough) return passMethod(b, method, thisArg, args, withSignal);
    return this.queue(b, bulkhead, undefined, run);
  }

  /**
   * A permit holds its slot until it settles. `acquire()` is synchronous, so it
   * never queues; a caller that can wait (`canWait`) waits in the queue as
   * `execute()` does, and gets its permit as a promise.
   */
  acquire<T>(b: GuardedBreaker): CallPermit<T>;
  acquire<T>(b: GuardedBreaker, canWait: true): CallPermit<T> | Promise<CallPermit<T>>;
  acquire<T>(b: GuardedBreaker, canWait = false): CallPermit<T> | Promise<CallPermit<T>> {
    const key = this.claim();
    if (key === undefined) return this.take(b, canWait);
    const end = () => this.overflowCalls!.overflowCallEnded(key);
    let permit: CallPermit<T> | Promise<CallPermit<T>>;
    try {
      permit = this.take<T>(b, canWait);
    } catch (refusal) {
      end();
      throw refusal;
    }
    if (!(permit instanceof Promise)) return endsWith(permit, end);
    return permit.then(
      (granted) => endsWith(granted, end),
      (refusal: unknown) => {
        end();
        throw refusal;
      },
    );
  }

  private take<T>(b: GuardedBreaker, canWait: boolean): CallPermit<T> | Promise<CallPermit<T>> {
    const refusal = this.rampRefusal(b);
    if (refusal !== undefined) throw refusal;
    const bulkhead = this.bulkhead;
    if (bulkhead === undefined) return passAcquire<T>(b);
    if (bulkhead.tryEnter()) return holdingPermit<T>(b, bulkhead);
    if (b.lettingAllThrough) return passAcquire<T>(b);
    if (!canWait) throw b.stateRefusal() ?? b.refuse('bulkhead-full', undefined);
    return this.queue(b, bulkhead, undefined, () => holdingPermit<T>(b, bulkhead));
  }

  /** The overflow child's, with a bulkhead: the key of the call coming in, now counted. */
  private claim(): string | undefined {
    return this.overflowCalls === undefined || this.bulkhead === undefined
      ? undefined
      : this.overflowCalls.claimOverflowCall();
  }

  /** `call`, whose key's count on the overflow child ends when it settles. */
  private ended<T>(key: string, call: Promise<T>): Promise<T> {
    const end = () => this.overflowCalls!.overflowCallEnded(key);
    call.then(end, end);
    return call;
  }

  /** Whether the guard has nothing left to do (its options were reconfigured away). */
  get idle(): boolean {
    return (
      this.bulkhead === undefined &&
      this.rampOptions === undefined &&
      this.healthCheckOptions === undefined
    );
  }

  snapshot(now: number, toWall: number): Partial<BreakerSnapshot> {
    const ramp = this.ramp !== undefined && !this.ramp.ended(now) ? this.ramp : undefined;
    const healthCheck = this.healthCheck?.snapshot(toWall);
    return {
      ...(this.bulkhead === undefined ? {} : { bulkhead: this.bulkhead.snapshot() }),
      ...(ramp === undefined ? {} : { rampUp: ramp.snapshot(now, toWall) }),
      ...(healthCheck === undefined ? {} : { healthCheck }),
    };
  }

  /**
   * Waits in the queue, then runs `call` holding the slot handed over;
   * `bulkhead-full` when full or too long. The state decides first: a call it
   * refuses never waits, and the waiters are refused when the breaker opens.
   */
  private queue<T>(
    b: GuardedBreaker,
    bulkhead: Bulkhead,
    signal: AbortSignal | undefined,
    call: () => T | Promise<T>,
  ): Promise<T> {
    if (!bulkhead.canQueue) return deferredRejection(b.refuse('bulkhead-full', undefined));
    const refusal = b.stateRefusal();
    if (refusal !== undefined) return deferredRejection(refusal);
    return bulkhead.wait(signal).then((how) => {
      if (how === DISMISSED) {
        const now = b.stateRefusal();
        if (now !== undefined) throw now;
        // Let in again before this turn came: it takes a free slot, or its place in the queue anew.
        return bulkhead.tryEnter() ? call() : this.queue(b, bulkhead, signal, call);
      }
      if (how !== GRANTED) throw b.refuse('bulkhead-full', undefined);
      // Aborted after the slot was handed over but before this turn: as an abort in the queue, nothing is counted.
      if (signal?.aborted) {
        bulkhead.leave();
        throw signal.reason;
      }
      return call();
    });
  }
}

/** `permit`, which calls `end` as it settles (at once when it holds no slot). */
function endsWith<T>(permit: CallPermit<T>, end: () => void): CallPermit<T> {
  const tracked = permit as CallPermit<T> & { onSettled?: () => void };
  const leave = tracked.onSettled;
  if (leave === undefined) end();
  else
    tracked.onSettled = () => {
      end();
      leave();
    };
  return permit;
}

/** The permit of a call that took a slot: it gives the slot back when it settles, or at once when admission fails. */
function holdingPermit<T>(b: GuardedBreaker, bulkhead: Bulkhead): CallPermit<T> {
  let permit: CallPermit<T>;
  try {
    permit = passAcquire<T>(b);
  } catch (rejection) {
    bulkhead.leave();
    throw rejection;
  }
  const tracked = permit as CallPermit<T> & { onSettled?: () => void };
  // A call forced `disabled` is let through uncounted, and holds no slot either.
  if ('onSettled' in tracked) tracked.onSettled = bulkhead.leave;
  else bulkhead.leave();
  return permit;
}
