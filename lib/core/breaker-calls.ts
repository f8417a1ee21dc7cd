import { probeSchedulerOf } from './ports/breaker-environment.js';
import { OVERFLOW_KEY, type FamilyTransitions } from './family/breaker-family.js';
import type { RecoveryProbeEvent, RetryEvent } from './events/breaker-events.js';
import type { ProbeScheduler } from './recovery/probe-scheduler.js';
import type { Bulkhead } from './overload/bulkhead.js';
import type { CallGuard } from './calls/call-guard.js';
import { guardOf, heldGuard } from './calls/guard-slot.js';
import { drawFrom, SAFE_DRAW } from './ports/random-draw.js';
import { BreakerMachine } from './breaker-machine.js';
import {
  CLOSED,
  DISABLED,
  HALF_OPEN,
  METRICS_ONLY,
  OPEN,
  stateName,
  type CallOutcome,
  type FailureCategory,
  type RejectionReason,
} from './state/breaker-state.js';
import {
  createRejection,
  type CallTimeoutError,
  type CircuitOpenError,
} from './errors/breaker.errors.js';
import { defaultClassifyResult, retryAfterOf } from './classify/classify.js';
import type { DeadlineScheduler } from './calls/deadline-scheduler.js';
import { FaultedAdmission } from './faults/fault-injection.js';
import { classifyWith } from './classify/guarded-classifier.js';
import type { ResolvedBreakerOptions } from './options/resolve-options.js';
import { tripReason } from './state/trip-rules.js';
import { applyDecision, applyFamilyDecision } from './state/admission.js';
import type { CallContext, ProtectedCall } from './calls/tracked-call.js';
import { SLOT_SUCCESS } from './window/outcome-window.interface.js';
import { settleCall } from './calls/settlement.js';

// Shared by every call that has neither a caller signal nor a deadline.
const NO_SIGNAL: CallContext = Object.freeze({ signal: undefined });

/**
 * What a call does to its breaker, and what its collaborators ask of it. The
 * closed path stays inline here: admission of a closed breaker with nothing
 * optional (`admitOwn`), the plain run (`runPlain`, `runMethod`) and a
 * closed success (`settleValue`): most of what a healthy breaker ever does.
 * Everything else is a collaborator's: the states' decisions and their
 * application (`state/`), the routes a call takes and its settlement
 * (`calls/`); the members below are what those collaborators, the guard,
 * the recovery probe, a family and a retry policy reach the breaker through.
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
      return applyDecision(this, this.monotonic());
    }
    const now = this.monotonic();
    this.refresh(now, true);
    return applyDecision(this, now);
  }

  /** @internal A family's own gate for a child's call: 0 to pass, a probe token, or the rejection. */
  admitAsFamily(): number | CircuitOpenError {
    const now = this.monotonic();
    this.refresh(now, true);
    return applyFamilyDecision(this, now);
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

  // ---------------------------------------------------------------------------
  // What the guard, the recovery probe, a family and a retry policy ask of the breaker

  /**
   * @internal Only with the bulkhead, rampUp or probe option: what stands in
   * front of admission. Kept beside the breaker, not in a field of its own: a
   * breaker without these options (a breaker per target) holds nothing for
   * them, and its calls read one flag of its shared config.
   */
  protected get guard(): CallGuard | undefined {
    return guardOf(this);
  }

  /** @internal The bulkhead in front of admission, if any (what `peek()` reads of it). */
  get bulkheadSlots(): Bulkhead | undefined {
    return this.guard?.bulkhead;
  }

  /** @internal Forced `disabled`: every call is let through uncounted, past the bulkhead too. */
  get lettingAllThrough(): boolean {
    return this.evidence?.forced?.state === 'disabled';
  }

  /** @internal A rejection by the guard (`bulkhead-full`, `ramp-up`), counted and announced as the breaker's own. */
  refuse(reason: RejectionReason, retryAfterMs: number | undefined): CircuitOpenError {
    return this.reject(reason, retryAfterMs);
  }

  /** @internal A retry policy's attempt, scheduled or refused by the budget: counted and announced. */
  recordRetry(event: RetryEvent): void {
    if (event.result === 'scheduled') this.counters.rare.retries++;
    else this.counters.rare.retriesDenied++;
    this.hub?.emit('retry', event);
  }

  /** @internal For the recovery probe: whether the breaker, refreshed without taking the fleet's permit, still needs it. */
  needsRecoveryProbe(now: number): boolean {
    if (this.parent !== undefined && !(this.parent as BreakerCalls).holdsChild(this)) return false;
    this.refresh(now, false);
    return (
      this.current === OPEN ||
      (this.current === HALF_OPEN && this.config.probe?.onSuccess === 'closed')
    );
  }

  /** @internal Shared: only the holder of the fleet's probe permit (asked for here, answered later) probes. */
  mayProbeForFleet(): boolean {
    const coordinator = this.env.coordinator;
    return coordinator === undefined || coordinator.mayProbe(this);
  }

  /** @internal The recovery probe succeeded (reason `recovery-probe`). */
  recoveredByProbe(to: 'half-open' | 'closed', now: number): void {
    const state = this.current;
    if (state !== OPEN && state !== HALF_OPEN) return;
    if (to === 'closed') this.transition(CLOSED, 'recovery-probe', now, undefined);
    else if (state === OPEN) this.transition(HALF_OPEN, 'recovery-probe', now, undefined);
  }

  /** @internal */
  recordRecoveryProbe(event: RecoveryProbeEvent): void {
    if (event.result === 'succeeded') this.counters.rare.recoveryProbesSucceeded++;
    else this.counters.rare.recoveryProbesFailed++;
    this.hub?.emit('recoveryProbe', event);
  }

  /** @internal The scheduler of this breaker's recovery probe: its registry's. */
  probeScheduler(): ProbeScheduler {
    return probeSchedulerOf(this.env);
  }

  /** @internal A family's child: one of its bulkheads holds and awaits no call any more. */
  bulkheadIdle(): void {
    (this.parent as BreakerCalls).keyed?.childIdle(this);
  }

  /**
   * @internal How many times `reconfigure()` put options in force (local, fleet
   * or reload): counted as it happens, so a change undone before anyone
   * looks still shows. A family's children run on its options and count none.
   */
  get reconfigurations(): number {
    return this.counters.reconfigurations;
  }

  /** @internal A family's overflow child: its family, which counts each key's calls on it. */
  get overflowCalls(): FamilyTransitions | undefined {
    return this.key === OVERFLOW_KEY ? (this.parent as BreakerCalls).keyed : undefined;
  }

  /** @internal A family's child: its bulkhead, if calls hold or wait for a slot of it (asked as it is evicted). */
  busyBulkhead(): Bulkhead | undefined {
    const bulkhead = heldGuard(this)?.bulkhead;
    return bulkhead !== undefined && bulkhead.active + bulkhead.queued > 0 ? bulkhead : undefined;
  }

  /**
   * @internal A new child of a family takes over the bulkhead its key's evicted
   * child left with calls in it, under the family's limits now: the key's cap
   * holds across eviction. Without a bulkhead of its own (reconfigured away)
   * it has no cap to keep.
   */
  adoptBulkhead(bulkhead: Bulkhead): void {
    const guard = heldGuard(this);
    const limits = this.config.bulkhead;
    if (guard?.bulkhead === undefined || limits === undefined) return;
    bulkhead.setLimits(limits);
    guard.bulkhead = bulkhead;
  }

  /** @internal Whether a family still holds `child` (an evicted child is probed no more). */
  holdsChild(child: BreakerCalls): boolean {
    const family = this.keyed as { holds(child: unknown): boolean } | undefined;
    return family?.holds(child) ?? false;
  }

  /**
   * @internal A number in [0, 1) from the breaker's random source (jitter,
   * shedding, a retry's jitter). A draw that throws or falls outside [0, 1)
   * counts as `SAFE_DRAW`, reported once (a family's children as the family).
   */
  draw(): number {
    const drawn = drawFrom(this.env.random, this.name, 'deps.random');
    if (typeof drawn === 'number') return drawn;
    ((this.parent as BreakerCalls | undefined) ?? this).reportFault('deps.random', drawn);
    return SAFE_DRAW;
  }

  /** @internal Whether this is a child whose family is not closed: its calls pass the family's gate first. */
  underFamilyGate(): boolean {
    const parent = this.parent as BreakerCalls | undefined;
    return (
      parent !== undefined &&
      parent.current !== CLOSED &&
      parent.current !== DISABLED &&
      parent.current !== METRICS_ONLY
    );
  }
}
