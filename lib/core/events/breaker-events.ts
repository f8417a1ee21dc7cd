import type { ForcedMode } from '../state/forced-state.js';
import type {
  BreakerState,
  FailureCategory,
  RejectionReason,
  ReconfigurationReset,
  TransitionReason,
} from '../state/breaker-state.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import type { CallRejectedError } from '../errors/breaker.errors.js';

/** @publicApi */
export interface StateChangeEvent {
  from: BreakerState;
  to: BreakerState;
  reason: TransitionReason;
  /** Clock time of the transition. */
  at: number;
  /** Set when the breaker opened: when it will admit probes. */
  openUntil?: number;
  /** Set when a rate rule opened a closed breaker (`failure-rate`, `slow-call-rate`): the window that decided it. */
  window?: { calls: number; failures: number; slowCalls: number };
  /** Set when the `consecutive-failures` rule opened a closed breaker: the streak that decided it. */
  consecutiveFailures?: number;
  /** Set when a family opened for its children (`open-ratio`): how many were failing, of those it knew. */
  children?: { failing: number; known: number };
  /** Set when `force()` made the transition (reason `forced`): what, why and by whom. */
  forced?: { state: ForcedMode; reason: string; by?: string };
}

/** @publicApi */
export interface SuccessEvent {
  durationMs: number;
  probe: boolean;
}

/** @publicApi */
export interface FailureEvent {
  error: unknown;
  category: FailureCategory | 'overload';
  durationMs: number;
  probe: boolean;
}

/** @publicApi */
export interface IgnoredEvent {
  error: unknown;
  durationMs: number;
  probe: boolean;
}

/** @publicApi */
export interface RejectedEvent {
  reason: RejectionReason;
  error: CallRejectedError;
}

/** @publicApi */
export interface TimeoutEvent {
  timeoutMs: number;
  probe: boolean;
}

/** @publicApi */
export interface SlowCallEvent {
  durationMs: number;
  thresholdMs: number;
  outcome: 'success' | 'failure';
}

/** @publicApi */
export interface ProbeEvent {
  /**
   * `released`: the probe's outcome was ignored and its permit returned to the budget.
   * `abandoned`: the half-open round ended while the probe was in flight (another probe
   * decided it, or `force()`, `reset()`, another replica...): its outcome counts as a
   * call, no longer as a probe.
   */
  result: 'admitted' | 'succeeded' | 'failed' | 'released' | 'abandoned';
}

/** A caller's fallback answered a call that was rejected, failed, timed out or overloaded. @publicApi */
export interface FallbackEvent {
  /** What the call produced: its error, or the value it resolved with when that value was classified as a failure or an overload. */
  error: unknown;
  /** `lastGood`: a cached earlier result was served; `interceptor`: `@UseCircuitBreaker()`'s fallback. */
  source: 'method' | 'function' | 'observable' | 'lastGood' | 'interceptor';
}

/**
 * A retry policy (`withRetry()`, the decorator's `retry`) is about to make
 * attempt number `attempt` after `delayMs` (`scheduled`), or wanted to and
 * the retry budget refused (`budget-exhausted`: the caller gets `error`).
 *
 * @publicApi
 */
export interface RetryEvent {
  attempt: number;
  delayMs: number;
  /** What the previous attempt produced: its error, or the value the breaker counted as failed. */
  error: unknown;
  result: 'scheduled' | 'budget-exhausted';
}

/** An active health check (`healthCheck` option) settled: a success moves the breaker on, a failure keeps it open. @publicApi */
export interface HealthCheckEvent {
  result: 'succeeded' | 'failed';
  durationMs: number;
  /** For a failure: the error, a value classified as a failure, or the `CallTimeoutError` of its deadline. */
  error: unknown;
}

/** The options in force changed (`reconfigure()`): what was and what is, and what had to start afresh. @publicApi */
export interface ReconfiguredEvent {
  previous: ResolvedBreakerOptions;
  current: ResolvedBreakerOptions;
  reset: ReconfigurationReset[];
}

/** @publicApi */
export interface BreakerEventMap {
  stateChange: StateChangeEvent;
  reconfigured: ReconfiguredEvent;
  success: SuccessEvent;
  failure: FailureEvent;
  ignored: IgnoredEvent;
  rejected: RejectedEvent;
  timeout: TimeoutEvent;
  slowCall: SlowCallEvent;
  probe: ProbeEvent;
  fallback: FallbackEvent;
  retry: RetryEvent;
  healthCheck: HealthCheckEvent;
}

/** @publicApi */
export type BreakerEventName = keyof BreakerEventMap;

// A record, so that the compiler fails here when an event is added to the map but not to the list.
const EVENTS: Record<BreakerEventName, true> = {
  stateChange: true,
  success: true,
  failure: true,
  ignored: true,
  rejected: true,
  timeout: true,
  slowCall: true,
  probe: true,
  fallback: true,
  reconfigured: true,
  retry: true,
  healthCheck: true,
};

/** Every event a breaker emits. @publicApi */
export const BREAKER_EVENT_NAMES: readonly BreakerEventName[] = Object.freeze(
  Object.keys(EVENTS) as BreakerEventName[],
);

/** Whether `value` names an event a breaker emits. @internal */
export function isBreakerEventName(value: unknown): value is BreakerEventName {
  return typeof value === 'string' && Object.hasOwn(EVENTS, value);
}

/** @publicApi */
export type BreakerListener<E extends BreakerEventName> = (event: BreakerEventMap[E]) => void;

/**
 * Listeners by event name. A breaker allocates one only when the first listener
 * subscribes, so a breaker nobody watches pays one `undefined` check per event.
 *
 * @internal
 */
export class BreakerEventHub {
  private readonly listeners: { [E in BreakerEventName]?: BreakerListener<E>[] } = {};

  /** `onListenerError` hears about a listener that threw: the call it observed must not. */
  constructor(
    private readonly onListenerError: (event: BreakerEventName, error: unknown) => void,
  ) {}

  isEmpty(): boolean {
    return Object.keys(this.listeners).length === 0;
  }

  has(event: BreakerEventName): boolean {
    return this.listeners[event] !== undefined;
  }

  add<E extends BreakerEventName>(event: E, listener: BreakerListener<E>): () => void {
    const list = (this.listeners[event] ??= []) as BreakerListener<E>[];
    list.push(listener);
    return () => this.remove(event, listener);
  }

  emit<E extends BreakerEventName>(event: E, payload: BreakerEventMap[E]): void {
    const list = this.listeners[event];
    if (list === undefined) return;
    // A copy, so that a listener that unsubscribes while being called does not skip its neighbour.
    for (const listener of list.slice()) {
      // A listener that throws must not break the call it observes, nor starve the other listeners.
      try {
        (listener as BreakerListener<E>)(payload);
      } catch (error) {
        this.onListenerError(event, error);
      }
    }
  }

  clear(): void {
    for (const key of Object.keys(this.listeners)) delete this.listeners[key as BreakerEventName];
  }

  private remove<E extends BreakerEventName>(event: E, listener: BreakerListener<E>): void {
    const list = this.listeners[event] as BreakerListener<E>[] | undefined;
    if (list === undefined) return;
    const index = list.indexOf(listener);
    if (index !== -1) list.splice(index, 1);
    if (list.length === 0) delete this.listeners[event];
  }
}
