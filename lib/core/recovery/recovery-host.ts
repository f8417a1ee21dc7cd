import type { BreakerCounters } from '../snapshot/breaker-counters.js';
import type { BreakerEnvironment } from '../ports/breaker-environment.js';
import type { CoordinatedBreaker } from '../ports/breaker-coordinator.interface.js';
import type { BreakerEventHub, HealthCheckEvent } from '../events/breaker-events.js';
import {
  CLOSED,
  HALF_OPEN,
  OPEN,
  type StateCode,
  type TransitionReason,
} from '../state/breaker-state.js';

/** What the health check reads and moves on its breaker, past its options. @internal */
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
 * needs its health check (an evicted child is checked no more).
 */
export function needsHealthCheck(b: RecoveryTarget, now: number): boolean {
  const family = b.parent?.keyed as { holds(child: unknown): boolean } | undefined;
  if (b.parent !== undefined && !(family?.holds(b) ?? false)) return false;
  b.refresh(now, false);
  return (
    b.current === OPEN || (b.current === HALF_OPEN && b.config.healthCheck?.onSuccess === 'closed')
  );
}

/** @internal Shared: only the holder of the fleet's probe permit (asked for here, answered later) checks. */
export function mayProbeForFleet(b: RecoveryTarget): boolean {
  const coordinator = b.env.coordinator;
  return coordinator === undefined || coordinator.mayProbe(b);
}

/** @internal The health check succeeded: half-open, or closed (reason `health-check`). */
export function recoveredByHealthCheck(
  b: RecoveryTarget,
  to: 'half-open' | 'closed',
  now: number,
): void {
  const state = b.current;
  if (state !== OPEN && state !== HALF_OPEN) return;
  if (to === 'closed') b.transition(CLOSED, 'health-check', now, undefined);
  else if (state === OPEN) b.transition(HALF_OPEN, 'health-check', now, undefined);
}

/** @internal Counts and announces one health check's result. */
export function recordHealthCheck(b: RecoveryTarget, event: HealthCheckEvent): void {
  if (event.result === 'succeeded') b.counters.rare.healthChecksSucceeded++;
  else b.counters.rare.healthChecksFailed++;
  b.hub?.emit('healthCheck', event);
}
