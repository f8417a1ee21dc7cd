import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import {
  BREAKER_STATES,
  type Breaker,
  type BreakerState,
  type FaultInjectionOptions,
  type ForcedMode,
  type InjectedFault,
  type TransitionReason,
} from '../core/index.js';
import { timerDelay } from '../core/calls/timer-delay.js';
import { CircuitBreakerEvents } from '../circuit-breaker.events.js';
import { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import {
  describeBreaker,
  optionDifferences,
  type BreakerDescriptor,
  type ExpectedBreakerOptions,
} from './breaker-descriptor.js';
import { closestName } from '../core/options/closest-name.js';
import { testingMessages } from './circuit-breaker-testing.messages.js';
import { ManualClock } from './manual-clock.js';

/** One transition of one breaker, as the tester recorded it. @publicApi */
export interface RecordedTransition {
  readonly from: BreakerState;
  readonly to: BreakerState;
  readonly reason: TransitionReason;
  /** Wall time of the breaker's (manual) clock when it happened, or was due. */
  readonly at: number;
}

/** Which breaker a helper works on: a per-key family's child by its `key`. @publicApi */
const FORCE_OPTIONS: readonly string[] = ['reason', 'untilMs', 'key'];

export interface TesterTarget {
  /** For a per-key family: the child of this key (created if it does not exist yet). */
  key?: string;
}

/** @publicApi */
export interface WaitForOptions extends TesterTarget {
  /** Real time to wait before failing with what the breaker is doing instead. Default 5000. */
  timeoutMs?: number;
}

/**
 * The helpers a test writes breaker tests with, injectable from
 * `CircuitBreakerTestingModule`: the manual clock, forcing a state, waiting
 * for a transition, the history of transitions of each breaker, its effective
 * options, and fault injection.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerTester implements OnApplicationShutdown {
  private readonly transitions = new Map<string, RecordedTransition[]>();
  private readonly faults = new Set<InjectedFault>();
  private readonly forced = new Set<Breaker>();
  private readonly stopRecording: () => void;

  constructor(
    private readonly registry: CircuitBreakerRegistry,
    events: CircuitBreakerEvents,
    @Inject(ManualClock) readonly clock: ManualClock,
  ) {
    this.stopRecording = events.observe(['stateChange'], (event) => {
      if (event.type !== 'stateChange') return;
      const { from, to, reason, at } = event.payload;
      const id = event.key === undefined ? event.breaker : `${event.breaker}[${event.key}]`;
      let list = this.transitions.get(id);
      if (list === undefined) this.transitions.set(id, (list = []));
      list.push({ from, to, reason, at });
    });
  }

  /** The breaker `name` (a per-key family's child with `key`). */
  breaker(name: string, target: TesterTarget = {}): Breaker {
    const breaker = this.registry.get(name);
    return target.key === undefined ? breaker : breaker.forKey(target.key);
  }

  /** Its state now, after the transitions the manual clock has made due. */
  state(name: string, target: TesterTarget = {}): BreakerState {
    return this.breaker(name, target).state;
  }

  /** Holds the breaker in `state` (see `Breaker.force()`) until `release()` or `restore()`. */
  force(
    name: string,
    state: ForcedMode | 'closed',
    options: { reason?: string; untilMs?: number } & TesterTarget = {},
  ): void {
    // A misspelt key (`until`) would be dropped here, before force() could refuse it.
    for (const key of Object.keys(options))
      if (!FORCE_OPTIONS.includes(key))
        throw new TypeError(
          testingMessages.unknownForceOption(name, key, closestName(key, FORCE_OPTIONS)),
        );
    const breaker = this.breaker(name, options);
    breaker.force(state, {
      reason: options.reason ?? 'forced by CircuitBreakerTester',
      by: 'test',
      ...(options.untilMs === undefined ? {} : { untilMs: options.untilMs }),
    });
    this.forced.add(breaker);
  }

  /** Ends a force: back to closed (reason `released`). */
  release(name: string, target: TesterTarget = {}): void {
    this.breaker(name, target).release();
  }

  /**
   * Resolves when the breaker reaches `state`: at once if it is there (after
   * the transitions time has made due), on its transition, or when a move of
   * the manual clock makes one due. Rejects after `timeoutMs` of real time
   * with the breaker, the state awaited, the state it is in and its
   * transitions so far.
   */
  waitFor(name: string, state: BreakerState, options: WaitForOptions = {}): Promise<void> {
    if (!BREAKER_STATES.includes(state))
      return Promise.reject(new TypeError(testingMessages.badState(name, state, BREAKER_STATES)));
    const breaker = this.breaker(name, options);
    if (breaker.state === state) return Promise.resolve();
    const timeoutMs = options.timeoutMs ?? 5_000;
    return new Promise<void>((resolve, reject) => {
      const stop = (): void => {
        offChange();
        offClock();
        clearTimeout(guard);
      };
      const offChange = breaker.on('stateChange', (change) => {
        if (change.to !== state) return;
        stop();
        resolve();
      });
      // Transitions are lazy: a moved clock makes one due, and reading the state makes it.
      const offClock = this.clock.onAdvance(() => void breaker.state);
      const guard = setTimeout(() => {
        stop();
        reject(new Error(this.timedOut(breaker, state, timeoutMs)));
      }, timerDelay(timeoutMs));
    });
  }

  /** The transitions of the breaker since the module started (or `clearHistory()`), oldest first. */
  history(name: string, target: TesterTarget = {}): RecordedTransition[] {
    const id = target.key === undefined ? name : this.breaker(name, target).name;
    this.registry.get(name);
    return [...(this.transitions.get(id) ?? [])];
  }

  /** Forgets the recorded transitions of every breaker. */
  clearHistory(): void {
    this.transitions.clear();
  }

  /** What the breaker is: its kind and its effective options as stable data (see `BreakerDescriptor`). */
  describe(name: string): BreakerDescriptor {
    return describeBreaker(this.registry.get(name));
  }

  /**
   * Fails, listing every difference, unless the breaker's effective options
   * have the values `expected` gives (nested objects compared key by key):
   * `expectOptions('payments', { timeoutMs: 2_000, window: { size: 20 } })`.
   */
  expectOptions(name: string, expected: ExpectedBreakerOptions): void {
    const differences = optionDifferences(name, this.describe(name).options, expected);
    if (differences.length > 0) throw new Error(testingMessages.optionsDiffer(name, differences));
  }

  /**
   * Makes the breaker's calls see a fault (`{ fail?, latencyMs?, overload?: {
   * retryAfterMs }, rate?, random? }`, see `Breaker.injectFault()`), from a
   * decorated method, the operator or `execute()` alike, until `remove()` on
   * the result or `restore()`. Latency runs on the manual clock.
   */
  inject(name: string, fault: FaultInjectionOptions, target: TesterTarget = {}): InjectedFault {
    const injected = this.breaker(name, target).injectFault(fault);
    this.faults.add(injected);
    return injected;
  }

  /** Removes every fault this tester injected and releases every force it set: breakers behave as configured again. */
  restore(): void {
    for (const fault of this.faults) fault.remove();
    this.faults.clear();
    for (const breaker of this.forced) breaker.release();
    this.forced.clear();
  }

  onApplicationShutdown(): void {
    this.stopRecording();
  }

  private timedOut(breaker: Breaker, awaited: string, timeoutMs: number): string {
    const changes = this.transitions.get(breaker.name) ?? [];
    const history =
      changes.length === 0
        ? testingMessages.noHistory()
        : testingMessages.lastChanges(
            changes.map((c) => `${c.from} → ${c.to} (${c.reason})`).join(', '),
          );
    return testingMessages.waitTimedOut(breaker.name, awaited, breaker.state, timeoutMs, history);
  }
}
