import { probeSchedulerOf } from './breaker-environment.js';
import { OVERFLOW_KEY, type FamilyTransitions } from './breaker-family.js';
import type { RecoveryProbeEvent, RetryEvent } from './breaker-events.js';
import type { ProbeScheduler } from './probe-scheduler.js';
import { BreakerCalls } from './breaker-calls.js';
import {
  CLOSED,
  DISABLED,
  HALF_OPEN,
  METRICS_ONLY,
  OPEN,
  type RejectionReason,
} from './breaker-state.js';
import type { CircuitOpenError } from './breaker.errors.js';
import type { Bulkhead } from './bulkhead.js';
import type { CallGuard } from './call-guard.js';
import { guardOf, heldGuard } from './calls/guard-slot.js';
import { drawFrom, SAFE_DRAW } from './random-draw.js';

/**
 * What stands between the calls and the public face: the guard in front of
 * admission (bulkhead, slow start, recovery probe) and what the guard, the
 * recovery probe, a family and a retry policy ask of the breaker. The call
 * routes themselves are `calls/call-routes.ts`.
 *
 * Not exported; kept in the declarations because `Breaker` extends it.
 */

export abstract class BreakerAdmission extends BreakerCalls {
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
    if (this.parent !== undefined && !(this.parent as BreakerAdmission).holdsChild(this))
      return false;
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
    (this.parent as BreakerAdmission).keyed?.childIdle(this);
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
    return this.key === OVERFLOW_KEY ? (this.parent as BreakerAdmission).keyed : undefined;
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
  holdsChild(child: BreakerAdmission): boolean {
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
    ((this.parent as BreakerAdmission | undefined) ?? this).reportFault('deps.random', drawn);
    return SAFE_DRAW;
  }

  /** @internal Whether this is a child whose family is not closed: its calls pass the family's gate first. */
  underFamilyGate(): boolean {
    const parent = this.parent as BreakerAdmission | undefined;
    return (
      parent !== undefined &&
      parent.current !== CLOSED &&
      parent.current !== DISABLED &&
      parent.current !== METRICS_ONLY
    );
  }
}
