import type { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import {
  BREAKER_STATES,
  type BreakerEventName,
  type BreakerSnapshot,
  type BreakerState,
  type FallbackEvent,
  type ProbeEvent,
  type RejectionReason,
  type HealthCheckEvent,
  type RetryEvent,
} from '../core/index.js';
import type { CircuitBreakerEvent } from '../interfaces/circuit-breaker-event.interface.js';

/** Every state, so that a state metric has a series per state and `== 1` queries always find one. @internal */
export const MEASURED_STATES: readonly BreakerState[] = BREAKER_STATES;

/**
 * Upper bounds of the call duration histogram, in seconds: the boundaries
 * OpenTelemetry advises for HTTP client durations, which suit remote calls of
 * a few milliseconds to a timeout of several seconds. Both integrations use them.
 *
 * @internal
 */
export const CALL_DURATION_BOUNDS_SECONDS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
]);

/**
 * How a call is counted by the metric integrations: each call once. A served
 * fallback is not an outcome: the same call already has one (rejected,
 * failure, timeout, overload), and a second one would make every sum over
 * outcomes count it twice. Fallbacks have their own counter.
 *
 * @internal
 */
export type MeasuredOutcome =
  'success' | 'failure' | 'timeout' | 'overload' | 'ignored' | 'rejected';

/** What served a fallback. @internal */
export type MeasuredFallbackSource = FallbackEvent['source'];

// Records over every member of a union: the compiler says when a new outcome, reason or result is missing here.
const OUTCOMES = Object.keys({
  success: 0,
  failure: 0,
  timeout: 0,
  overload: 0,
  ignored: 0,
  rejected: 0,
} satisfies Record<MeasuredOutcome, 0>) as MeasuredOutcome[];
const REASONS = Object.keys({
  open: 0,
  'half-open-busy': 0,
  isolated: 0,
  'retry-after': 0,
  throttled: 0,
  'bulkhead-full': 0,
  'ramp-up': 0,
} satisfies Record<RejectionReason, 0>) as RejectionReason[];

/**
 * Every label set a breaker's events can produce, beside its identity: what
 * a metric integration removes when a per-key child is evicted, since its
 * libraries forget series one complete label set at a time.
 *
 * @internal
 */
export const MEASURED_LABEL_SETS = Object.freeze({
  calls: OUTCOMES.flatMap<{ outcome: MeasuredOutcome; reason: RejectionReason | undefined }>(
    (outcome) =>
      outcome === 'rejected'
        ? REASONS.map((reason) => ({ outcome, reason }))
        : [{ outcome, reason: undefined }],
  ),
  transitions: MEASURED_STATES.flatMap((from) => MEASURED_STATES.map((to) => ({ from, to }))),
  probes: Object.keys({
    admitted: 0,
    succeeded: 0,
    failed: 0,
    released: 0,
    abandoned: 0,
  } satisfies Record<ProbeEvent['result'], 0>) as ProbeEvent['result'][],
  fallbacks: Object.keys({
    method: 0,
    function: 0,
    observable: 0,
    lastGood: 0,
    interceptor: 0,
  } satisfies Record<MeasuredFallbackSource, 0>) as MeasuredFallbackSource[],
  retries: Object.keys({ scheduled: 0, 'budget-exhausted': 0 } satisfies Record<
    RetryEvent['result'],
    0
  >) as RetryEvent['result'][],
  healthChecks: Object.keys({ succeeded: 0, failed: 0 } satisfies Record<
    HealthCheckEvent['result'],
    0
  >) as HealthCheckEvent['result'][],
});

/**
 * What one breaker event means for metrics, whatever the metrics library:
 * a call (with its outcome, the rejection reason, the duration of an admitted
 * call), a served fallback, a transition, or a probe.
 *
 * @internal
 */
export type Measurement =
  | {
      kind: 'call';
      outcome: MeasuredOutcome;
      reason: RejectionReason | undefined;
      durationMs: number | undefined;
    }
  | { kind: 'fallback'; source: MeasuredFallbackSource }
  | { kind: 'transition'; from: BreakerState; to: BreakerState }
  | { kind: 'probe'; result: ProbeEvent['result'] }
  | { kind: 'retry'; result: RetryEvent['result'] }
  | { kind: 'healthCheck'; result: HealthCheckEvent['result'] };

/**
 * The events metrics need. `timeout` is left out: the same call also emits a
 * `failure` of category `timeout`, which counts it once; `slowCall` has no metric.
 *
 * @internal
 */
export const MEASURED_EVENTS: readonly BreakerEventName[] = [
  'success',
  'failure',
  'ignored',
  'rejected',
  'fallback',
  'stateChange',
  'probe',
  'retry',
  'healthCheck',
];

/** @internal */
export function measure(event: CircuitBreakerEvent): Measurement | undefined {
  switch (event.type) {
    case 'success':
      return {
        kind: 'call',
        outcome: 'success',
        reason: undefined,
        durationMs: event.payload.durationMs,
      };
    case 'failure': {
      const category = event.payload.category;
      const outcome = category === 'overload' || category === 'timeout' ? category : 'failure';
      return { kind: 'call', outcome, reason: undefined, durationMs: event.payload.durationMs };
    }
    case 'ignored':
      return { kind: 'call', outcome: 'ignored', reason: undefined, durationMs: undefined };
    case 'rejected':
      return {
        kind: 'call',
        outcome: 'rejected',
        reason: event.payload.reason,
        durationMs: undefined,
      };
    case 'fallback':
      return { kind: 'fallback', source: event.payload.source };
    case 'stateChange':
      return { kind: 'transition', from: event.payload.from, to: event.payload.to };
    case 'probe':
      return { kind: 'probe', result: event.payload.result };
    case 'retry':
      return { kind: 'retry', result: event.payload.result };
    case 'healthCheck':
      return { kind: 'healthCheck', result: event.payload.result };
    default:
      return undefined;
  }
}

/**
 * Every breaker of an application, with the children of per-key families when
 * they are to be reported by key.
 *
 * @internal
 */
export function* snapshotsOf(
  registry: CircuitBreakerRegistry,
  withChildren: boolean,
): Generator<{ name: string; key: string | undefined; snapshot: BreakerSnapshot }> {
  for (const snapshot of registry.snapshot()) {
    const name = snapshot.name;
    yield { name, key: undefined, snapshot };
    if (withChildren && snapshot.family !== undefined) {
      for (const child of registry.get(name).children())
        yield { name, key: child.key, snapshot: child.snapshot() };
    }
  }
}

/**
 * For each per-key family of an application: how many of the children it
 * holds are in each state (every state, zeros included), without a label per
 * key. A tenant's outage shows here even when the family itself (its
 * aggregate level) stays closed and keys are not labelled.
 *
 * @internal
 */
export function* familyStatesOf(
  registry: CircuitBreakerRegistry,
): Generator<{ name: string; states: Record<BreakerState, number> }> {
  for (const name of registry.list()) {
    const family = registry.get(name);
    if (family.config.perKey === undefined) continue;
    const states = Object.fromEntries(MEASURED_STATES.map((state) => [state, 0])) as Record<
      BreakerState,
      number
    >;
    for (const child of family.children()) states[child.state]++;
    yield { name, states };
  }
}
