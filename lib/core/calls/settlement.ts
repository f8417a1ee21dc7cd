import type { BreakerCounters } from '../snapshot/breaker-counters.js';
import type { BreakerEnvironment } from '../ports/breaker-environment.js';
import type { BreakerEventHub } from '../events/breaker-events.js';
import {
  CLOSED,
  METRICS_ONLY,
  OPEN,
  type CallOutcome,
  type FailureCategory,
  type StateCode,
  type TransitionReason,
} from '../state/breaker-state.js';
import { failureCategoryOf, retryAfterOf } from '../classify/classify.js';
import type { HalfOpenRound } from '../recovery/half-open-round.js';
import { OverloadPressure } from '../overload/overload-pressure.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import {
  SLOT_FAILURE,
  SLOT_OVERLOAD,
  SLOT_SLOW,
  SLOT_SUCCESS,
  type OutcomeWindow,
} from '../window/outcome-window.interface.js';
import type { BreakerParts } from './breaker-parts.js';
import { tripReason } from '../state/trip-rules.js';

/** What settling a call reads and moves on its breaker. @internal */
export interface SettledBreaker {
  readonly config: ResolvedBreakerOptions;
  readonly env: BreakerEnvironment;
  readonly counters: BreakerCounters;
  readonly hub: BreakerEventHub | undefined;
  readonly timed: boolean;
  readonly generationStart: number;
  readonly current: StateCode;
  readonly window: OutcomeWindow;
  readonly round: HalfOpenRound | undefined;
  consecutiveFailures: number;
  streakStart: number;
  /** Whether every failure of the current streak said the dependency could not be reached. */
  streakUnreachable: boolean;
  overload: OverloadPressure | undefined;
  /** The slow start, when the options add one (`BreakerParts`). */
  readonly rare: { readonly parts: BreakerParts | undefined } | undefined;
  monotonic(): number;
  noteFailure(failure: unknown, category: FailureCategory | 'overload'): void;
  transition(
    to: StateCode,
    reason: TransitionReason,
    now: number,
    retryAfterHint: number | undefined,
  ): void;
}

/**
 * Counts one settled call, judged by `config` (the options it started under):
 * the totals and events always, the window, the streak and the trip rules
 * only for the current generation of a closed (or metrics-only) breaker, and
 * a probe's round. A closed success admitted from the streak's start on,
 * the breaker settles itself (`settleValue`): it never comes here.
 *
 * @internal
 */
export function settleCall(
  b: SettledBreaker,
  token: number,
  outcome: CallOutcome,
  subject: unknown,
  startedAt: number,
  category: FailureCategory | undefined,
  config: ResolvedBreakerOptions,
): void {
  const now = b.timed ? b.monotonic() : 0;
  // A call admitted before anyone needed durations (a listener added since) reports 0.
  const durationMs = b.timed && startedAt === startedAt ? now - startedAt : 0;
  const probe = token < 0;
  const cat = outcome === 'failure' ? (category ?? failureCategoryOf(subject)) : undefined;
  const slot = countOutcome(b, outcome, subject, cat, durationMs, probe, config);
  if (slot === undefined) {
    if (probe) releaseProbe(b, -token);
    return;
  }
  if (probe) {
    settleProbe(b, -token, outcome === 'success' && (slot & SLOT_SLOW) === 0, subject);
    return;
  }
  if (token < b.generationStart) return;
  const state = b.current;
  if (state !== CLOSED && state !== METRICS_ONLY) return;
  b.window.record(slot, now);
  // Beside the rate rule, the streak is about the calls admitted from its first failing one on: a
  // call admitted before it (in flight when the dependency went down) neither ends it nor extends it.
  // Given alone, consecutiveFailures keeps the classic count, whatever order concurrent calls end in.
  const current = token >= b.streakStart || !config.rateRule;
  if (outcome === 'failure') {
    const unreachable = cat === 'connection' || cat === 'timeout';
    if (b.consecutiveFailures === 0) {
      b.streakStart = token;
      b.consecutiveFailures = 1;
      b.streakUnreachable = unreachable;
    } else if (current) {
      b.consecutiveFailures++;
      b.streakUnreachable &&= unreachable;
    }
  } else if (outcome === 'success' && current) b.consecutiveFailures = 0;
  if (state !== CLOSED) return;
  if (outcome === 'overload') {
    onOverload(b, subject);
    return;
  }
  // Only a throttle counts accepted calls; a pause alone does not need the clock read.
  if (b.overload?.throttle !== undefined) b.overload.accepted(b.monotonic());
  evaluateTrip(b, outcome === 'failure' ? subject : undefined);
  if (outcome === 'failure' && b.rare?.parts?.ramp !== undefined) rampTrip(b, token, subject);
}

/**
 * Trips the breaker if the failure streak, the failure rate or the slow-call
 * rate says so. `failure` is the failure just recorded, if the call was one:
 * only a failure's `Retry-After` may lengthen the open period.
 *
 * @internal
 */
export function evaluateTrip(b: SettledBreaker, failure: unknown): void {
  const reason = tripReason(b.config, b.window, b.consecutiveFailures, b, b.streakUnreachable);
  if (reason !== undefined)
    b.transition(OPEN, reason, b.monotonic(), retryAfterOf(failure, b.env.clock.now()));
}

/** The totals and events of one outcome; the window's slot it fills, none for an ignored call. */
function countOutcome(
  b: SettledBreaker,
  outcome: CallOutcome,
  subject: unknown,
  category: FailureCategory | undefined,
  durationMs: number,
  probe: boolean,
  config: ResolvedBreakerOptions,
): number | undefined {
  const counters = b.counters;
  const hub = b.hub;
  let slot: number;
  if (outcome === 'success') {
    counters.successes++;
    slot = SLOT_SUCCESS;
    hub?.emit('success', { durationMs, probe });
  } else if (outcome === 'failure') {
    const cat = category ?? 'other';
    counters.fail(cat);
    b.noteFailure(subject, cat);
    slot = SLOT_FAILURE;
    hub?.emit('failure', { error: subject, category: cat, durationMs, probe });
  } else if (outcome === 'overload') {
    counters.rare.overloads++;
    b.noteFailure(subject, 'overload');
    slot = SLOT_OVERLOAD;
    hub?.emit('failure', { error: subject, category: 'overload', durationMs, probe });
  } else {
    counters.rare.ignored++;
    hub?.emit('ignored', { error: subject, durationMs, probe });
    return undefined;
  }
  const slowMs = config.slowCallDurationMs;
  if (slowMs !== undefined && durationMs >= slowMs && outcome !== 'overload') {
    counters.rare.slowCalls++;
    slot |= SLOT_SLOW;
    hub?.emit('slowCall', {
      durationMs,
      thresholdMs: slowMs,
      outcome: outcome as 'success' | 'failure',
    });
  }
  return slot;
}

/**
 * While ramping up, a failure that brings the failure rate to the threshold
 * reopens at once, whatever the population: only a failure can raise the
 * rate, so only a failure needs looking at.
 */
function rampTrip(b: SettledBreaker, token: number, subject: unknown): void {
  const parts = b.rare?.parts;
  if (parts?.ramp === undefined || b.current !== CLOSED || token < b.generationStart) return;
  const now = b.monotonic();
  const reason = parts.rampTrip(b.config, b.window, now);
  if (reason !== undefined)
    b.transition(OPEN, reason, now, retryAfterOf(subject, b.env.clock.now()));
}

function onOverload(b: SettledBreaker, subject: unknown): void {
  const now = b.monotonic();
  const hint = retryAfterOf(subject, b.env.clock.now());
  // Neither a pause to honour nor a throttle to feed: nothing to hold.
  if ((hint === undefined || hint <= 0) && b.config.overloadK === 0) return;
  (b.overload ??= new OverloadPressure()).record(b.config, now, hint, b.window.calls);
}

function settleProbe(b: SettledBreaker, id: number, succeeded: boolean, subject: unknown): void {
  const round = b.round;
  // Expired, or admitted by a half-open period that has already ended.
  if (round === undefined || !round.remove(id)) return;
  if (succeeded) {
    const closes = round.succeed();
    b.counters.rare.probesSucceeded++;
    b.hub?.emit('probe', { result: 'succeeded' });
    if (closes) b.transition(CLOSED, 'probes-succeeded', b.monotonic(), undefined);
    return;
  }
  const hopeless = round.fail();
  b.counters.rare.probesFailed++;
  b.hub?.emit('probe', { result: 'failed' });
  // Reopen as soon as closing has become impossible.
  if (hopeless)
    b.transition(OPEN, 'probe-failed', b.monotonic(), retryAfterOf(subject, b.env.clock.now()));
}

function releaseProbe(b: SettledBreaker, id: number): void {
  const round = b.round;
  if (round === undefined || !round.remove(id)) return;
  round.admitted--;
  b.counters.rare.probesReleased++;
  b.hub?.emit('probe', { result: 'released' });
}
