import type { AdmissionPeek } from './admission-peek.interface.js';
import {
  CLOSED,
  DISABLED,
  METRICS_ONLY,
  stateName,
  type RejectionReason,
  type StateCode,
} from './breaker-state.js';
import type { CallRejectedError } from '../errors/breaker.errors.js';
import type { HeldSlots } from '../family/breaker-family.js';
import { REJECT, type AdmissionDecision } from './admission-decision.js';

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

/** The answer of each admitting decision, by the state it admits in (open and isolated never admit). */
const PERMITS: readonly AdmissionPeek[] = [
  CLOSED_ADMITS,
  PROBE_ADMITTED,
  PROBE_ADMITTED,
  PROBE_ADMITTED,
  DISABLED_ADMITS,
  METRICS_ONLY_ADMITS,
];

/** What `peek()` reads of a breaker (and of its family). @internal */
export interface PeekSubject {
  readonly name: string;
  readonly current: StateCode;
  /** Only while something (overload, an injected fault) takes the closed breaker off its plain path. */
  readonly overload: object | undefined;
  readonly parent: PeekSubject | undefined;
  /** For a per-key family: its children. */
  readonly keyed: PeekFamily | undefined;
  /** The bulkhead in front of admission, if any. */
  readonly bulkheadSlots: HeldSlots | undefined;
  readonly config: { readonly bulkhead: object | undefined };
  /** Forced `disabled`: every call is let through uncounted, past the bulkhead too. */
  readonly lettingAllThrough: boolean;
  monotonic(): number;
  decide(now: number): AdmissionDecision;
  reject(reason: RejectionReason, retryAfterMs: number | undefined): CallRejectedError;
}

/** What `peekKey()` reads of a family. @internal */
export interface PeekFamily {
  find(key: string): PeekSubject | undefined;
  kept(key: string): { slots: HeldSlots; onOverflow: boolean } | undefined;
}

/**
 * `breaker.peek()`: the state's decision for a call made now, not applied (no
 * probe permit taken, nothing counted or emitted, no transition made), behind
 * the bulkhead and the family's gate as a call would find them.
 *
 * @internal
 */
export function peekAdmission(b: PeekSubject): AdmissionPeek {
  // In front of admission, as for a call: a full bulkhead refuses whatever the state.
  const slots = b.bulkheadSlots;
  if (
    slots !== undefined &&
    b.keyed === undefined &&
    slots.active >= slots.cap &&
    !slots.canQueue &&
    !b.lettingAllThrough
  )
    return rejection(b, b.current, 'bulkhead-full', undefined);
  const parent = b.parent;
  const ungated =
    parent === undefined ||
    parent.current === CLOSED ||
    parent.current === DISABLED ||
    parent.current === METRICS_ONLY;
  // A closed breaker without overload admits whatever the time: no clock to read.
  if (ungated && b.current === CLOSED && b.overload === undefined) return CLOSED_ADMITS;
  const now = b.monotonic();
  if (b.keyed !== undefined || ungated) return decided(b, now);
  const gate = decided(parent!, now);
  if (!gate.permitted) return gate;
  const own = decided(b, now);
  // A child forced disabled records nothing: its call gives the family's probe permit back.
  if (!own.permitted || !gate.probe || own.probe) return own;
  if (own === DISABLED_ADMITS && b.lettingAllThrough) return own;
  return own.state === 'closed' ? FAMILY_PROBE_ADMITTED : { ...own, probe: true };
}

/**
 * `family.peekKey(key)`: `forKey(key).peek()` without creating the child. A
 * key the family does not hold would get a new closed child behind the
 * family's gate (and its evicted child's bulkhead, if calls still hold it).
 *
 * @internal
 */
export function peekKey(family: PeekSubject, children: PeekFamily, key: string): AdmissionPeek {
  const child = children.find(key);
  const kept = children.kept(key);
  const limits = family.config.bulkhead;
  if (kept !== undefined && limits !== undefined && kept.slots.active >= kept.slots.cap) {
    // The key's calls on the overflow child take a slot of its kept bulkhead too, and never wait for one.
    const by = child ?? family;
    if ((kept.onOverflow || !kept.slots.canQueue) && !by.lettingAllThrough)
      return rejection(by, child?.current ?? CLOSED, 'bulkhead-full', undefined);
  }
  if (child !== undefined) return peekAdmission(child);
  if (family.current === CLOSED && family.overload === undefined) return CLOSED_ADMITS;
  const gate = decided(family, family.monotonic());
  return gate.permitted && gate.probe
    ? FAMILY_PROBE_ADMITTED
    : gate.permitted
      ? CLOSED_ADMITS
      : gate;
}

/**
 * Before a call waits for a bulkhead slot (none is free): the rejection the
 * state gives it now, counted and announced by the breaker that refuses (this
 * one, or its family), as its admission would; none when it may be admitted.
 *
 * @internal
 */
export function stateRefusal(b: PeekSubject): CallRejectedError | undefined {
  const answer = peekAdmission(b);
  if (answer.permitted || answer.reason === 'bulkhead-full') return undefined;
  const parent = b.parent;
  const by = parent !== undefined && answer.breakerName === parent.name ? parent : b;
  return by.reject(answer.reason, answer.retryAfterMs);
}

/** The breaker's own decision at `now`, as an answer. */
function decided(b: PeekSubject, now: number): AdmissionPeek {
  const decision = b.decide(now);
  return decision.kind === REJECT
    ? rejection(b, decision.state, decision.reason, decision.retryAfterMs)
    : PERMITS[decision.state]!;
}

function rejection(
  b: PeekSubject,
  state: StateCode,
  reason: RejectionReason,
  retryAfterMs: number | undefined,
): AdmissionPeek {
  return { permitted: false, state: stateName(state), reason, retryAfterMs, breakerName: b.name };
}
