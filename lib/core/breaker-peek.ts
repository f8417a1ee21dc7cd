import type { BreakerFamily, FamilyMember } from './breaker-family.js';
import { breakerMessages } from './breaker.messages.js';
import { BreakerHooks } from './breaker-hooks.js';
import {
  CLOSED,
  DISABLED,
  METRICS_ONLY,
  stateName,
  type BreakerState,
  type RejectionReason,
  type StateCode,
} from './breaker-state.js';
import type { CircuitOpenError } from './breaker.errors.js';
import { REJECT } from './state/admission-decision.js';

/**
 * What `breaker.peek()` answers: whether a call made now would be admitted,
 * and if not, the rejection it would get.
 *
 * @publicApi
 */
export type AdmissionPeek =
  | {
      readonly permitted: true;
      /** The state the call would find: after the transitions time has made due (which `peek()` does not make). */
      readonly state: BreakerState;
      /** Whether it would be admitted as a half-open probe (of the breaker, or of its family). */
      readonly probe: boolean;
    }
  | {
      readonly permitted: false;
      readonly state: BreakerState;
      readonly reason: RejectionReason;
      /** As `CircuitOpenError.retryAfterMs` would say. */
      readonly retryAfterMs: number | undefined;
      /** The breaker that would reject: the family's, for a child whose family rejects every key. */
      readonly breakerName: string;
    };

// The admitted answers are shared and frozen: the common check allocates nothing.
const CLOSED_ADMITS: AdmissionPeek = Object.freeze({
  permitted: true,
  state: 'closed',
  probe: false,
});
const DISABLED_ADMITS: AdmissionPeek = Object.freeze({
  permitted: true,
  state: 'disabled',
  probe: false,
});
const METRICS_ONLY_ADMITS: AdmissionPeek = Object.freeze({
  permitted: true,
  state: 'metrics-only',
  probe: false,
});
const PROBE_ADMITTED: AdmissionPeek = Object.freeze({
  permitted: true,
  state: 'half-open',
  probe: true,
});
/** A closed child admitted as its half-open family's probe. */
const FAMILY_PROBE_ADMITTED: AdmissionPeek = Object.freeze({
  permitted: true,
  state: 'closed',
  probe: true,
});

/** The answer of each admitting decision, by the state it admits in (a due round counts as half-open). */
const PERMITS: readonly AdmissionPeek[] = [
  CLOSED_ADMITS,
  PROBE_ADMITTED,
  PROBE_ADMITTED,
  PROBE_ADMITTED,
  DISABLED_ADMITS,
  METRICS_ONLY_ADMITS,
];

/**
 * Admission without a call: `peek()` and `isCallPermitted()` read the state
 * and answer as the next admission would, taking no probe permit, counting
 * nothing, emitting nothing and making no transition, not even one that time
 * has made due (the answer reflects it). A layer of its own over the call
 * path (`BreakerCalls`, through `BreakerHooks`), so that path is not touched.
 *
 * Not exported; kept in the declarations because `Breaker` extends it.
 */
export abstract class BreakerPeek extends BreakerHooks {
  /**
   * Whether a call made now would be admitted, and if not why, without
   * admitting one: no probe permit is taken, no call counted, no event emitted
   * and no transition made (a due one is reflected, not made). A bulkhead
   * with no free slot and a full queue rejects (`bulkhead-full`), as the call
   * would be. Three answers are estimates, since only a real admission can
   * decide them: client-side throttling and a slow start (`rampUp`) shed at
   * random (peek answers permitted), and a breaker that shares its state
   * asks the fleet for its probe permit only when a call comes (peek answers
   * permitted once the open duration is over). On a per-key family, it
   * answers for the family's own gate: ask `forKey(key).peek()` for one target.
   */
  peek(): AdmissionPeek {
    // In front of admission, as for a call: a full bulkhead refuses whatever the state.
    const bulkhead = this.guard?.bulkhead;
    if (
      bulkhead !== undefined &&
      this.keyed === undefined &&
      bulkhead.active >= this.config.bulkhead!.maxConcurrent &&
      !bulkhead.canQueue &&
      !this.lettingAllThrough
    )
      return this.rejection(this.current, 'bulkhead-full', undefined);
    const parent = this.parent as BreakerPeek | undefined;
    const ungated =
      parent === undefined ||
      parent.current === CLOSED ||
      parent.current === DISABLED ||
      parent.current === METRICS_ONLY;
    // A closed breaker without overload admits whatever the time: no clock to read.
    if (ungated && this.current === CLOSED && this.overload === undefined) return CLOSED_ADMITS;
    const now = this.monotonic();
    if (this.keyed !== undefined) return this.peekOwn(now);
    if (ungated) return this.peekOwn(now);
    const gate = parent!.peekOwn(now);
    if (!gate.permitted) return gate;
    const own = this.peekOwn(now);
    // A child forced disabled records nothing: its call gives the family's probe permit back.
    if (!own.permitted || !gate.probe || own.probe) return own;
    if (own === DISABLED_ADMITS && this.lettingAllThrough) return own;
    return own.state === 'closed' ? FAMILY_PROBE_ADMITTED : { ...own, probe: true };
  }

  /**
   * On a per-key family: `forKey(key).peek()` without creating the child (so
   * without evicting another). A key the full family would send to its
   * overflow child is answered by that child; another key the family does not
   * hold would get a new closed child behind the family's gate, and is answered so.
   */
  peekKey(key: string): AdmissionPeek {
    const family = this.keyed as BreakerFamily<BreakerPeek & FamilyMember> | undefined;
    if (family === undefined) throw new TypeError(breakerMessages.notPerKey(this.name));
    const child = family.find(key);
    if (child !== undefined) return child.peek();
    // Its next child takes over the bulkhead its evicted child left with calls in it.
    const kept = family.kept(key);
    const limits = this.config.bulkhead;
    if (kept !== undefined && limits !== undefined && kept.active >= limits.maxConcurrent)
      if (!kept.canQueue && !this.lettingAllThrough)
        return this.rejection(CLOSED, 'bulkhead-full', undefined);
    if (this.current === CLOSED && this.overload === undefined) return CLOSED_ADMITS;
    const gate = this.peekOwn(this.monotonic());
    return gate.permitted && gate.probe
      ? FAMILY_PROBE_ADMITTED
      : gate.permitted
        ? CLOSED_ADMITS
        : gate;
  }

  /**
   * @internal Before a call waits for a bulkhead slot (none is free): the
   * rejection the state gives it now, counted and announced by the breaker
   * that refuses (this one, or its family), as its admission would; none when
   * it may be admitted. What `peek()` answers refused, a call is refused.
   */
  stateRefusal(): CircuitOpenError | undefined {
    const answer = this.peek();
    if (answer.permitted || answer.reason === 'bulkhead-full') return undefined;
    const parent = this.parent as BreakerPeek | undefined;
    const by = parent !== undefined && answer.breakerName === parent.name ? parent : this;
    return by.reject(answer.reason, answer.retryAfterMs);
  }

  /** Whether a call made now would be admitted: `peek().permitted`, with the same guarantees. */
  isCallPermitted(): boolean {
    return this.peek().permitted;
  }

  /** The breaker's own admission at `now` (or its family gate's), as the state decides it for `admitOwn()` / `admitAsFamily()`. */
  private peekOwn(now: number): AdmissionPeek {
    const decision = this.decide(now);
    return decision.kind === REJECT
      ? this.rejection(decision.state, decision.reason, decision.retryAfterMs)
      : PERMITS[decision.state]!;
  }

  private rejection(
    state: StateCode,
    reason: RejectionReason,
    retryAfterMs: number | undefined,
  ): AdmissionPeek {
    return {
      permitted: false,
      state: stateName(state),
      reason,
      retryAfterMs,
      breakerName: this.name,
    };
  }
}
