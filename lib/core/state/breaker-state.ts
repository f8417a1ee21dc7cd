/**
 * - `closed`: calls pass and their outcomes are counted.
 * - `open`: calls are rejected locally until the open duration ends.
 * - `half-open`: a small budget of probe calls decides between closed and open.
 *
 * Held by hand (`force()`, until `release()`, `reset()` or its `untilMs`), one
 * state per mode, after resilience4j's FORCED_OPEN, METRICS_ONLY and DISABLED:
 * - `isolated`: every call is rejected (`force('open')`; `isolate()` is its alias).
 * - `metrics-only`: every call passes and is counted (window, totals, events), never trips
 *   (`force('metrics-only')`; `force('closed')` is its alias).
 * - `disabled`: every call passes and nothing is counted: the breaker is switched off
 *   (`force('disabled')`; `disable()` is its alias).
 *
 * @publicApi
 */
export type BreakerState =
  'closed' | 'open' | 'half-open' | 'isolated' | 'disabled' | 'metrics-only';

/** Every state a breaker can be in, in the order of their codes. @publicApi */
export const BREAKER_STATES: readonly BreakerState[] = Object.freeze([
  'closed',
  'open',
  'half-open',
  'isolated',
  'disabled',
  'metrics-only',
]);

// The engine keeps its state as a small integer: comparisons on the hot path stay on numbers.
/** @internal */ export const CLOSED = 0;
/** @internal */ export const OPEN = 1;
/** @internal */ export const HALF_OPEN = 2;
/** @internal */ export const ISOLATED = 3;
/** @internal */ export const DISABLED = 4;
/** @internal */ export const METRICS_ONLY = 5;
/** @internal A state as the engine stores it: an index into `BREAKER_STATES`. The states held by hand are the last three. */
export type StateCode =
  | typeof CLOSED
  | typeof OPEN
  | typeof HALF_OPEN
  | typeof ISOLATED
  | typeof DISABLED
  | typeof METRICS_ONLY;

/** @internal The name of a state code. */
export function stateName(code: StateCode): BreakerState {
  return BREAKER_STATES[code]!;
}

/**
 * How a settled call is counted.
 * - `success`: the dependency did its job (a 404 or a 400 is a valid answer).
 * - `failure`: the dependency could not do its job (5xx, timeouts, connection errors).
 * - `ignored`: neither; the call does not enter the window (a caller's own abort).
 * - `overload`: the dependency is shedding load (429, or 503 with `Retry-After`):
 *   back off, do not stop.
 *
 * @publicApi
 */
export type CallOutcome = 'success' | 'failure' | 'ignored' | 'overload';

/**
 * Why a call was rejected without being attempted.
 * - `open`: the breaker is open.
 * - `half-open-busy`: half-open and the probe budget is taken.
 * - `isolated`: forced open (`force('open')`, `isolate()`).
 * - `retry-after`: the dependency asked for a pause with `Retry-After`.
 * - `throttled`: shed locally because the dependency reports overload.
 * - `bulkhead-full`: the concurrency cap and its queue are full (code `BULKHEAD_FULL`); never a failure.
 * - `ramp-up`: just closed, and this call is past the share the slow start admits now.
 *
 * @publicApi
 */
export type RejectionReason =
  | 'open'
  | 'half-open-busy'
  | 'isolated'
  | 'retry-after'
  | 'throttled'
  | 'bulkhead-full'
  | 'ramp-up';

/** Why the breaker changed state. @publicApi */
export type TransitionReason =
  | 'failure-rate'
  | 'slow-call-rate'
  | 'consecutive-failures'
  | 'open-ratio'
  | 'open-duration-elapsed'
  | 'probes-succeeded'
  | 'probe-failed'
  | 'probe-expired'
  | 'shared-open'
  | 'shared-close'
  | 'health-check'
  | 'reset'
  | 'forced'
  | 'released';

/** What kind of dependency failure a counted failure was. @publicApi */
export type FailureCategory = 'timeout' | 'connection' | 'server' | 'other';

/** What a reconfiguration had to start afresh: the window (its shape changed), the overload evidence (overload handling turned off). @publicApi */
export type ReconfigurationReset = 'window' | 'overload';
