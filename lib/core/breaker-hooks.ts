import { BreakerAdmission } from './breaker-admission.js';
import {
  BREAKER_EVENT_NAMES,
  BreakerEventHub,
  isBreakerEventName,
  type BreakerEventName,
  type BreakerListener,
} from './breaker-events.js';
import { breakerMessages } from './breaker.messages.js';
import {
  checkFault,
  FaultPlan,
  type FaultInjectionOptions,
  type InjectedFault,
} from './fault-injection.js';
import { faultInjectionMessages } from './fault-injection.messages.js';
import { OverloadPressure } from './overload-pressure.js';

/**
 * What the application attaches to a breaker: its listeners (`on()`), and
 * whether they make calls read the clock; and the faults injected into it
 * (`injectFault()`). Between the calls and the public face, so that `Breaker`
 * keeps to running calls, control and snapshots.
 *
 * Not exported; kept in the declarations because `Breaker` extends it.
 */
export abstract class BreakerHooks extends BreakerAdmission {
  /** Subscribes to an event; returns the function that unsubscribes. */
  on<E extends BreakerEventName>(event: E, listener: BreakerListener<E>): () => void {
    if (!isBreakerEventName(event))
      throw new TypeError(breakerMessages.unknownEvent(this.name, event, BREAKER_EVENT_NAMES));
    if (typeof listener !== 'function')
      throw new TypeError(breakerMessages.notAListener(this.name, event, listener));
    const hub = (this.hub ??= new BreakerEventHub((name, fault) =>
      this.onListenerFault(name, fault),
    ));
    // Only events that carry a duration make calls read the clock.
    if (event === 'success' || event === 'failure' || event === 'ignored' || event === 'slowCall')
      this.timed = true;
    const off = hub.add(event, listener);
    return () => {
      off();
      // A listener that comes and goes must not slow the breaker for good.
      if (this.hub !== hub) return;
      if (hub.isEmpty()) this.hub = undefined;
      this.timed = this.needsTiming();
    };
  }

  /** Whether calls must be timed: slow-call detection, a time window, or listeners of durations. */
  protected needsTiming(): boolean {
    const hub = this.hub;
    return (
      this.config.slowCallDurationMs !== undefined ||
      this.config.window.type === 'time' ||
      (hub !== undefined &&
        (hub.has('success') || hub.has('failure') || hub.has('ignored') || hub.has('slowCall')))
    );
  }

  /** The children a per-key family holds now (none for a plain breaker). */
  abstract children(): IterableIterator<BreakerHooks>;

  /**
   * Makes this breaker's calls see a fault instead of the dependency's answer
   * (failures, latency, overload; every call or a share), until `remove()` on
   * the result: for tests and game days, to watch fallbacks, 503s and
   * readiness without breaking the dependency. Refused unless the breaker was
   * built with `faultInjection: true`. It replaces the fault injected before,
   * outlives `reset()` and transitions, and a family injects it into every
   * child, present and future. Costs the closed path nothing while none is.
   */
  injectFault(fault: FaultInjectionOptions): InjectedFault {
    if (!this.env.faultInjection) throw new TypeError(faultInjectionMessages.disabled(this.name));
    const checked = checkFault(this.name, fault);
    this.overload?.faults?.remove();
    const plan = new FaultPlan(this.name, checked, (removed) => {
      this.dropFault(removed);
      for (const child of this.children()) child.dropFault(removed);
    });
    this.holdFault(plan);
    for (const child of this.children()) {
      // A child's own injection gives way to its family's.
      child.overload?.faults?.remove();
      child.holdFault(plan);
    }
    return plan;
  }

  /** @internal Holds `plan`: the calls the breaker admits from now on may get it. */
  protected holdFault(plan: FaultPlan): void {
    (this.overload ??= new OverloadPressure()).faults = plan;
  }

  /** @internal `plan` was removed: back to the plain path, unless the overload pressure still needs the detour. */
  protected dropFault(plan: FaultPlan): void {
    const pressure = this.overload;
    if (pressure?.faults !== plan) return;
    pressure.faults = undefined;
    if (pressure.spent) this.overload = undefined;
  }
}
