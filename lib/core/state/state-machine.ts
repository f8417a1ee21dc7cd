import { RareState, type ChildrenEvidence } from './rare-state.js';
import {
  CLOSED,
  DISABLED,
  HALF_OPEN,
  ISOLATED,
  METRICS_ONLY,
  OPEN,
  type ReconfigurationReset,
} from './breaker-state.js';
import { CallTimeoutError } from '../errors/breaker.errors.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import type { Forcing } from './forced-state.js';
import type { HalfOpenRound } from '../recovery/half-open-round.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import { sameWindow, windowOf } from '../window/window-of.js';
import { transition, type MachineHost } from './transition.js';

/**
 * Makes the transitions that time alone has made due. Only an admission
 * (`admitting`) asks a coordinator for the fleet's probe permit: a health
 * indicator, a scrape or a snapshot must never take the fleet's probe.
 *
 * @internal
 */
export function refreshState(b: MachineHost, now: number, admitting: boolean): void {
  if (b.current >= ISOLATED) releaseIfDue(b, now);
  halfOpenIfDue(b, now, admitting);
  if (b.current !== HALF_OPEN) return;
  expireProbes(b, now);
  // A probe that expired long ago reopened the breaker long ago: that open period may be over too.
  halfOpenIfDue(b, now, admitting);
}

/** A force with an end ends by itself, dated when it was due. */
function releaseIfDue(b: MachineHost, now: number): void {
  const forced = b.rare?.forced;
  if (forced?.until === undefined || now < forced.until) return;
  b.rare!.forced = undefined;
  transition(b, CLOSED, 'released', forced.until, undefined, undefined, forced.untilWall);
}

function halfOpenIfDue(b: MachineHost, now: number, admitting: boolean): void {
  const coordinator = b.env.coordinator;
  if (
    b.current === OPEN &&
    now >= b.openUntilAt &&
    (coordinator === undefined || (admitting && coordinator.mayProbe(b)))
  ) {
    // Dated when it was due, not when someone first looked: `since` and time in state stay true for an idle breaker.
    // With a coordinator it was due when the fleet's probe permit came, which is now.
    transition(
      b,
      HALF_OPEN,
      'open-duration-elapsed',
      coordinator === undefined ? b.openUntilAt : now,
      undefined,
    );
  }
}

/** A probe still unsettled after `halfOpen.maxWaitMs` counts as failed, so a hung probe cannot wedge the breaker. */
function expireProbes(b: MachineHost, now: number): void {
  let round: HalfOpenRound | undefined;
  let record;
  while ((round = b.round) !== undefined && (record = round.takeExpired(now)) !== undefined) {
    const maxWait = round.maxWaitMs;
    const error = new CallTimeoutError(
      b.name,
      maxWait,
      breakerMessages.probeExpired(b.name, maxWait),
    );
    record.call?.abandon(error);
    b.counters.rare.timeouts++;
    b.counters.fail('timeout');
    b.noteFailure(error, 'timeout');
    b.hub?.emit('timeout', { timeoutMs: maxWait, probe: true });
    b.hub?.emit('failure', {
      error,
      category: 'timeout',
      durationMs: now - record.startedAt,
      probe: true,
    });
    b.counters.rare.probesFailed++;
    const hopeless = round.fail();
    b.hub?.emit('probe', { result: 'failed' });
    if (hopeless) transition(b, OPEN, 'probe-expired', record.startedAt + maxWait, undefined);
  }
}

/** @internal Enough children are unhealthy: a closed family opens (reason `open-ratio`). */
export function openForChildren(b: MachineHost, now: number, children: ChildrenEvidence): void {
  if (b.current === CLOSED)
    transition(b, OPEN, 'open-ratio', now, undefined, undefined, undefined, children);
}

/** @internal `adoptOpen()`: open until `openUntil` (wall time), or extend an open period to it. */
export function adoptOpen(b: MachineHost, openUntil: number): void {
  if (openUntil <= b.env.clock.now()) return;
  if (b.current === OPEN) {
    // Replicas share wall times; the breaker keeps its own on the monotonic reading.
    const until = openUntil - b.wallOffset;
    if (until > b.openUntilAt) b.openUntilAt = until;
    return;
  }
  if (b.current !== CLOSED && b.current !== HALF_OPEN) return;
  transition(b, OPEN, 'shared-open', b.monotonic(), undefined, openUntil);
}

/** @internal `adoptClosed()`: closed, dated `closedAt` (wall time), never before its opening nor in the future. */
export function adoptClosed(b: MachineHost, closedAt: number | undefined): void {
  if (b.current !== OPEN && b.current !== HALF_OPEN) return;
  const now = b.monotonic();
  const at =
    closedAt === undefined
      ? now
      : Math.max(b.sinceAt, Math.min(now, closedAt - (b.env.clock.now() - now)));
  transition(b, CLOSED, 'shared-close', at, undefined);
}

/** @internal `reset()`: closed, with an empty window, no backoff, no pause and no force. */
export function resetToClosed(b: MachineHost): void {
  const now = b.monotonic();
  b.overload = undefined;
  if (b.rare !== undefined) b.rare.forced = undefined;
  if (b.current !== CLOSED) {
    transition(b, CLOSED, 'reset', now, undefined);
    return;
  }
  b.generation++;
  b.streakStart = b.generationStart = b.counters.admitted;
  b.window.reset();
  b.consecutiveFailures = 0;
  b.reopens = 0;
}

/** @internal `force()`, checked: hold the breaker until `unhold()` or the force's end. */
export function hold(b: MachineHost, forcing: Forcing, now: number): void {
  (b.rare ??= new RareState()).forced = forcing;
  const to =
    forcing.state === 'open' ? ISOLATED : forcing.state === 'disabled' ? DISABLED : METRICS_ONLY;
  transition(b, to, 'forced', now, undefined);
}

/** @internal `release()`: back to closed (reason `released`), if forced. */
export function unhold(b: MachineHost): void {
  if (b.rare?.forced === undefined) return;
  b.rare.forced = undefined;
  transition(b, CLOSED, 'released', b.monotonic(), undefined);
}

/**
 * @internal Puts `config` in force, keeping the state, the counters, the
 * streak and the window when the new window has the same shape; returns
 * what it had to start afresh. Calls in flight keep the options they were
 * admitted under (their deadline, and a half-open round its budget).
 */
export function applyConfig(
  b: MachineHost,
  config: ResolvedBreakerOptions,
): ReconfigurationReset[] {
  const previous = b.config;
  const reset: ReconfigurationReset[] = [];
  (b as { config: ResolvedBreakerOptions }).config = config;
  if (!sameWindow(previous.window, config.window)) {
    b.window = windowOf(config, b.monotonic());
    reset.push('window');
  }
  if (config.overloadK === 0 && b.overload?.throttle !== undefined) {
    b.overload.endEvidence();
    if (b.overload.spent) b.overload = undefined;
    reset.push('overload');
  }
  return reset;
}
