import { BreakerMachine } from './breaker-machine.js';
import {
  CLOSED,
  HALF_OPEN,
  OPEN,
  stateName,
  type CallOutcome,
  type FailureCategory,
  type RejectionReason,
} from './breaker-state.js';
import { createRejection, type CallTimeoutError, type CircuitOpenError } from './breaker.errors.js';
import { defaultClassifyResult, retryAfterOf } from './classify.js';
import type { DeadlineScheduler } from './deadline-scheduler.js';
import { FaultedAdmission } from './fault-injection.js';
import { classifyWith } from './guarded-classifier.js';
import type { ResolvedBreakerOptions } from './resolve-options.js';
import { tripReason } from './trip-rules.js';
import { LET_THROUGH, PROBE, REJECT, type AdmissionDecision } from './state/admission-decision.js';
import type { CallContext, ProtectedCall } from './tracked-call.js';
import { SLOT_SUCCESS } from './window/outcome-window.interface.js';
import { settleCall } from './calls/settlement.js';
import { UNCOUNTED } from './calls/call-tokens.js';

// Shared by every call that has neither a caller signal nor a deadline.
const NO_SIGNAL: CallContext = Object.freeze({ signal: undefined });

// A throttled call may be admitted at any moment; this is a polite hint, not a schedule.
const THROTTLED_RETRY_AFTER_MS = 1_000;

/**
 * What a call does to its breaker: admission (a token, a probe permit, or the
 * rejection), then settlement.
 *
 * How a breaker counts what its calls did: classification (the application's
 * classifiers, guarded, then the defaults), the window and the streak, the
 * probes of a half-open round, and the overload pressure; then it asks the
 * trip rules whether to move. A settled call of an older generation is
 * counted in the totals but cannot move the breaker.
 *
 * The closed path's success is settled inline in `settleValue`: it is most
 * of what a healthy breaker ever does.
 *
 * Not exported; kept in the declarations because `Breaker` extends it.
 */
export abstract class BreakerCalls extends BreakerMachine {
  /** @internal Where the breaker's per-call deadlines wait (see `Clock.setTimer`). */
  get deadlines(): DeadlineScheduler {
    return this.env.deadlines;
  }

  // ---------------------------------------------------------------------------
  // Admission

  /** @internal A token (the generation; a negative probe id for probes), the rejection, or an admission with a fault. */
  admitOwn(): number | CircuitOpenError | FaultedAdmission {
    if (this.current === CLOSED) {
      // Overload pressure or an injected fault: the plain path itself has nothing more to check.
      if (this.overload === undefined) {
        this.counters.admitted++;
        return this.generation;
      }
      const now = this.monotonic();
      return this.applyOwn(this.decide(now), now);
    }
    const now = this.monotonic();
    this.refresh(now, true);
    return this.applyOwn(this.decide(now), now);
  }

  /**
   * Applies what the state decided (after the transitions due were made):
   * counts the call, takes its probe permit, sheds it under overload, or
   * rejects it.
   */
  private applyOwn(
    decision: AdmissionDecision,
    now: number,
  ): number | CircuitOpenError | FaultedAdmission {
    switch (decision.kind) {
      case REJECT:
        return this.reject(decision.reason, decision.retryAfterMs);
      case LET_THROUGH:
        return UNCOUNTED;
      case PROBE: {
        const probe = this.admitProbe(now);
        return typeof probe === 'number' ? this.withFault(probe) : probe;
      }
      default:
        if (this.current === CLOSED && this.overload !== undefined) {
          const shed = this.shedUnderOverload(now);
          if (shed !== undefined) return shed;
        }
        this.counters.admitted++;
        return this.withFault(this.generation);
    }
  }

  /** An admitted call's token, with the injected fault when this call gets it. */
  private withFault(token: number): number | FaultedAdmission {
    const faults = this.overload?.faults;
    return faults !== undefined && faults.applies(this)
      ? new FaultedAdmission(token, faults)
      : token;
  }

  /** @internal A family's own gate for a child's call: 0 to pass, a probe token, or the rejection. */
  admitAsFamily(): number | CircuitOpenError {
    const now = this.monotonic();
    this.refresh(now, true);
    const decision = this.decide(now);
    if (decision.kind === REJECT) return this.reject(decision.reason, decision.retryAfterMs);
    return decision.kind === PROBE ? this.admitProbe(now) : 0;
  }

  /** @internal Until the open duration ends; past it (the fleet's probe is someone else's), until that probe must be decided. */
  protected openRetryAfter(now: number): number {
    return now < this.openUntilAt ? this.openUntilAt - now : this.config.probeMaxWaitMs;
  }

  /** The dependency reports overload and its pause is over: client-side throttling sheds a share of calls. */
  private shedUnderOverload(now: number): CircuitOpenError | undefined {
    const pressure = this.overload!;
    // The pause is over (the decision said so): forget it.
    pressure.pauseLeft(now);
    if (pressure.shed(this.config, now, this))
      return this.reject('throttled', THROTTLED_RETRY_AFTER_MS);
    // The pause is over and the overloads have left the window: calls take the plain path again.
    if (pressure.spent) this.overload = undefined;
    return undefined;
  }

  /**
   * A probe permit, if the round has room. Still open when the decision was
   * made (the open duration is over, but the fleet's probe is another
   * replica's): rejected until that probe must be decided.
   */
  private admitProbe(now: number): number | CircuitOpenError {
    const round = this.round;
    if (this.current !== HALF_OPEN || round === undefined)
      return this.reject('open', this.openRetryAfter(now));
    if (round.full) return this.reject('half-open-busy', round.retryAfter(now));
    const id = round.admit(now);
    this.counters.admitted++;
    this.counters.rare.probesAdmitted++;
    this.hub?.emit('probe', { result: 'admitted' });
    return -id;
  }

  /** @internal Rejects a call: counted and announced. */
  reject(reason: RejectionReason, retryAfterMs: number | undefined): CircuitOpenError {
    const error = createRejection(
      this.name,
      stateName(this.current),
      reason,
      retryAfterMs,
      this.evidence?.lastFailure,
    );
    this.counters.reject(reason);
    this.hub?.emit('rejected', { reason, error });
    return error;
  }

  /**
   * @internal Takes back an admission that turned out not to be a call (a
   * decorated method that returned an Observable: its subscriptions are the calls).
   */
  withdrawAdmission(token: number): void {
    this.counters.admitted--;
    const round = this.round;
    if (token >= 0 || round === undefined || !round.remove(-token)) return;
    round.admitted--;
    this.counters.rare.probesAdmitted--;
  }

  /** @internal Lets a probe's call object be told when the probe expires. */
  attachProbe(id: number, call: { abandon(error: CallTimeoutError): void }): void {
    this.round?.attach(id, call);
  }

  // ---------------------------------------------------------------------------
  // Running a call on the plain path

  /** @internal The plain path: no deadline, no caller signal, no probe; no call object, no promise of our own. */
  async runPlain<T>(fn: ProtectedCall<T>, token: number, startedAt: number): Promise<T> {
    // Judged by the options it started under, whatever reconfigure() puts in force meanwhile.
    const config = this.config;
    let value: T;
    try {
      value = await fn(NO_SIGNAL);
    } catch (error) {
      this.settle(token, this.classifyError(error, config), error, startedAt, undefined, config);
      throw error;
    }
    this.settleValue(token, value, startedAt, config);
    return value;
  }

  /** @internal `runPlain()` for a decorated method, without a closure per call. */
  async runMethod<T>(
    method: (...args: any[]) => T | PromiseLike<T>,
    thisArg: unknown,
    args: unknown[],
    token: number,
    startedAt: number,
  ): Promise<T> {
    const config = this.config;
    let value: T;
    try {
      value = await method.apply(thisArg, args);
    } catch (error) {
      this.settle(token, this.classifyError(error, config), error, startedAt, undefined, config);
      throw error;
    }
    this.settleValue(token, value, startedAt, config);
    return value;
  }

  // ---------------------------------------------------------------------------
  // Settlement

  /** @internal Counts a call that resolved with `value`, judged by `config` (the options it started under); returns how it counted. */
  settleValue(
    token: number,
    value: unknown,
    startedAt: number,
    config: ResolvedBreakerOptions = this.config,
  ): CallOutcome {
    // The common case in full, without the general bookkeeping: a success of the
    // current closed generation that nobody times (no duration listeners, no slow
    // calls, no time window) or classifies by hand.
    if (
      token === this.generation &&
      this.current === CLOSED &&
      !this.timed &&
      this.overload === undefined &&
      config.classifyResult === undefined &&
      (typeof value !== 'object' ||
        value === null ||
        defaultClassifyResult(value, config.overloadK !== 0) === 'success')
    ) {
      this.counters.successes++;
      this.consecutiveFailures = 0;
      const w = this.window;
      w.record(SLOT_SUCCESS, 0);
      // A success can only trip a window that already holds failures (when it completes the minimum population).
      if (w.failures !== 0) this.evaluate(undefined);
      return 'success';
    }
    const outcome = this.classifyResult(value, config);
    this.settle(token, outcome, value, startedAt, undefined, config);
    return outcome;
  }

  /** @internal Counts a timed-out call: a failure of category `timeout`. */
  settleTimeout(
    token: number,
    error: CallTimeoutError,
    startedAt: number,
    config: ResolvedBreakerOptions = this.config,
  ): void {
    this.counters.rare.timeouts++;
    this.hub?.emit('timeout', { timeoutMs: error.timeoutMs, probe: token < 0 });
    this.settle(token, 'failure', error, startedAt, 'timeout', config);
  }

  /** @internal Counts one settled call, judged by the options it started under; drops its effect on state when it belongs to an older generation. */
  settle(
    token: number,
    outcome: CallOutcome,
    subject: unknown,
    startedAt: number,
    category: FailureCategory | undefined,
    config: ResolvedBreakerOptions = this.config,
  ): void {
    settleCall(this, token, outcome, subject, startedAt, category, config);
  }

  /**
   * @internal Trips the breaker if the failure streak, the failure rate or the
   * slow-call rate says so. `failure` is the failure just recorded, if the
   * call was one: only a failure's `Retry-After` may lengthen the open period.
   */
  evaluate(failure: unknown): void {
    const reason = tripReason(this.config, this.window, this.consecutiveFailures, this);
    if (reason !== undefined)
      this.transition(OPEN, reason, this.monotonic(), retryAfterOf(failure, this.env.clock.now()));
  }

  /** @internal How `config` (the options a call started under) counts a call that threw `error`. */
  classifyError(error: unknown, config: ResolvedBreakerOptions = this.config): CallOutcome {
    return classifyWith(this, 'classify', error, config);
  }

  /** @internal How `config` counts a call that resolved with `value`. */
  classifyResult(value: unknown, config: ResolvedBreakerOptions = this.config): CallOutcome {
    return classifyWith(this, 'classifyResult', value, config);
  }
}
