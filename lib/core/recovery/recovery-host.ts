import type { BreakerCounters } from '../snapshot/breaker-counters.js';
import type { BreakerEnvironment } from '../ports/breaker-environment.js';
import type { CoordinatedBreaker } from '../ports/breaker-coordinator.interface.js';
import type { BreakerEventHub, RecoveryProbeEvent } from '../events/breaker-events.js';
import {
  CLOSED,
  HALF_OPEN,
  OPEN,
  type StateCode,
  type TransitionReason,
} from '../state/breaker-state.js';

/** What the recovery probe reads and moves on its breaker, past its options. @internal */
export interface RecoveryTarget extends CoordinatedBreaker {
  /** For a child of a per-key family: the family, which may have evicted it. */
  readonly parent:
    | (CoordinatedBreaker & { readonly keyed: { holds(child: never): boolean } | undefined })
    | undefined;
  readonly env: BreakerEnvironment;
  readonly counters: BreakerCounters;
  readonly hub: BreakerEventHub | undefined;
  readonly current: StateCode;
  refresh(now: number, admitting: boolean): void;
  transition(
    to: StateCode,
    reason: TransitionReason,
    now: number,
    retryAfterHint: number | undefined,
  ): void;
}

/**
 * @internal Whether `b`, refreshed without taking the fleet's permit, still
 * needs its recovery probe (an evicted child is probed no more).
 */
export function needsRecoveryProbe(b: RecoveryTarget, now: number): boolean {
  const family = b.parent?.keyed as { holds(child: unknown): boolean } | undefined;
  if (b.parent !== undefined && !(family?.holds(b) ?? false)) return false;
  b.refresh(now, false);
  return b.current === OPEN || (b.current === HALF_OPEN && b.config.probe?.onSuccess === 'closed');
}

/** @internal Shared: only the holder of the fleet's probe permit (asked for here, answered later) probes. */
export function mayProbeForFleet(b: RecoveryTarget): boolean {
  const coordinator = b.env.coordinator;
  return coordinator === undefined || coordinator.mayProbe(b);
}

/** @internal The recovery probe succeeded: half-open, or closed (reason `recovery-probe`). */
export function recoveredByProbe(b: RecoveryTarget, to: 'half-open' | 'closed', now: number): void {
  const state = b.current;
  if (state !== OPEN && state !== HALF_OPEN) return;
  if (to === 'closed') b.transition(CLOSED, 'recovery-probe', now, undefined);
  else if (state === OPEN) b.transition(HALF_OPEN, 'recovery-probe', now, undefined);
}

/** @internal Counts and announces one recovery probe's result. */
export function recordRecoveryProbe(b: RecoveryTarget, event: RecoveryProbeEvent): void {
  if (event.result === 'succeeded') b.counters.rare.recoveryProbesSucceeded++;
  else b.counters.rare.recoveryProbesFailed++;
  b.hub?.emit('recoveryProbe', event);
}
