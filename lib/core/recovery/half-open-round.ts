import type { BreakerCounters } from '../snapshot/breaker-counters.js';
import type { BreakerEventHub } from '../events/breaker-events.js';
import type { CallTimeoutError } from '../errors/breaker.errors.js';
import type { HalfOpenSnapshot } from '../snapshot/breaker-snapshot.js';

/** A half-open probe in flight; `call` is told when the breaker gives up on it. */
export interface ProbeRecord {
  readonly id: number;
  readonly startedAt: number;
  call: { abandon(error: CallTimeoutError): void } | undefined;
}

/** The half-open options a round is judged by (a breaker's resolved options have them). */
export interface ProbeBudget {
  readonly maxProbes: number;
  readonly maxConcurrentProbes: number;
  readonly successesToClose: number;
  readonly probeMaxWaitMs: number;
}

// Probe ids only need to be unique within a breaker; one counter serves all.
let probeSeq = 0;

/**
 * The probe budget of one half-open period: how many probes were admitted,
 * which are in flight (oldest first, so expiry looks at the head only), and
 * how many succeeded and failed. The breaker decides the transitions; the
 * round only counts and answers whether closing is still possible.
 *
 * @internal
 */
export class HalfOpenRound {
  admitted = 0;
  succeeded = 0;
  failed = 0;
  private readonly probes: ProbeRecord[] = [];

  constructor(private readonly budget: ProbeBudget) {}

  /** How long a probe of this round may stay unsettled: the budget it was opened with, whatever the options say now. */
  get maxWaitMs(): number {
    return this.budget.probeMaxWaitMs;
  }

  /** Probes admitted and not settled yet. */
  get inFlight(): number {
    return this.probes.length;
  }

  /** Whether another probe would exceed the budget (in total or at once). */
  get full(): boolean {
    return (
      this.admitted >= this.budget.maxProbes ||
      this.probes.length >= this.budget.maxConcurrentProbes
    );
  }

  /** How long until the oldest probe must be decided: a polite hint for a caller the full budget turned away. */
  retryAfter(now: number): number {
    const oldest = this.probes[0];
    return oldest === undefined
      ? 0
      : Math.max(0, oldest.startedAt + this.budget.probeMaxWaitMs - now);
  }

  /** Admits a probe; returns its id. */
  admit(now: number): number {
    this.admitted++;
    const id = ++probeSeq;
    this.probes.push({ id, startedAt: now, call: undefined });
    return id;
  }

  /** Lets a probe's call object be told when the probe expires. */
  attach(id: number, call: { abandon(error: CallTimeoutError): void }): void {
    const record = this.probes[this.indexOf(id)];
    if (record !== undefined) record.call = call;
  }

  /** Takes a probe out of flight; false when it is not in flight (expired, or settled already). */
  remove(id: number): boolean {
    const index = this.indexOf(id);
    if (index === -1) return false;
    this.probes.splice(index, 1);
    return true;
  }

  /** The oldest probe in flight when it has waited `probeMaxWaitMs` by `now`, taken out of flight. */
  takeExpired(now: number): ProbeRecord | undefined {
    const oldest = this.probes[0];
    if (oldest === undefined || now - oldest.startedAt < this.budget.probeMaxWaitMs)
      return undefined;
    this.probes.shift();
    return oldest;
  }

  /**
   * What the next admission would find at `now`, expiring nothing: when the
   * probes that have waited too long would make closing impossible, the time
   * that reopens the breaker; otherwise whether the budget is full and how
   * long until the oldest remaining probe must be decided. For `peek()`.
   */
  peek(now: number): { reopensAt: number } | { full: boolean; retryAfter: number } {
    const { maxProbes, maxConcurrentProbes, successesToClose, probeMaxWaitMs } = this.budget;
    const probes = this.probes;
    let failed = this.failed;
    let expired = 0;
    for (; expired < probes.length; expired++) {
      const startedAt = probes[expired]!.startedAt;
      if (now - startedAt < probeMaxWaitMs) break;
      if (maxProbes - ++failed < successesToClose) return { reopensAt: startedAt + probeMaxWaitMs };
    }
    const oldest = probes[expired];
    return {
      full: this.admitted >= maxProbes || probes.length - expired >= maxConcurrentProbes,
      retryAfter: oldest === undefined ? 0 : Math.max(0, oldest.startedAt + probeMaxWaitMs - now),
    };
  }

  /** Counts a failed probe; says whether closing has become impossible, which reopens the breaker. */
  fail(): boolean {
    this.failed++;
    return this.budget.maxProbes - this.failed < this.budget.successesToClose;
  }

  /** Counts a successful probe; says whether enough succeeded to close. */
  succeed(): boolean {
    this.succeeded++;
    return this.succeeded >= this.budget.successesToClose;
  }

  snapshot(): HalfOpenSnapshot {
    return {
      probesAdmitted: this.admitted,
      probesInFlight: this.probes.length,
      probesSucceeded: this.succeeded,
      probesFailed: this.failed,
    };
  }

  private indexOf(id: number): number {
    const probes = this.probes;
    for (let i = 0; i < probes.length; i++) if (probes[i]!.id === id) return i;
    return -1;
  }
}

/**
 * A round ends (by its own decision, `force()`, `reset()`, another replica's
 * word...) with probes still in flight: they are `abandoned`, and will count
 * as calls when they settle, no longer as probes. So probe totals add up:
 * admitted = succeeded + failed + released + abandoned + in flight.
 *
 * @internal
 */
export function abandonProbes(
  round: HalfOpenRound,
  counters: BreakerCounters,
  hub: BreakerEventHub | undefined,
): void {
  const count = round.inFlight;
  if (count === 0) return;
  counters.rare.probesAbandoned += count;
  if (hub !== undefined) for (let i = 0; i < count; i++) hub.emit('probe', { result: 'abandoned' });
}
