import type { BreakerEnvironment } from '../ports/breaker-environment.js';
import {
  checkFault,
  FaultPlan,
  type FaultInjectionOptions,
  type InjectedFault,
} from './fault-injection.js';
import { faultInjectionMessages } from './fault-injection.messages.js';
import { RareState } from '../state/rare-state.js';

/** What fault injection reads and sets on a breaker (and on a family's children). @internal */
export interface FaultHolder {
  readonly name: string;
  readonly env: Pick<BreakerEnvironment, 'faultInjection'>;
  /** Where a held fault lives, beside the breaker's other rare state. */
  rare: RareState | undefined;
  children(): IterableIterator<FaultHolder>;
}

/**
 * `breaker.injectFault()`: checks `fault`, replaces the fault injected before,
 * and holds it in the breaker and every child of a family (present, and
 * future ones as they are born). Refused unless the breaker was built with
 * `faultInjection: true`.
 *
 * @internal
 */
export function injectFault(b: FaultHolder, fault: FaultInjectionOptions): InjectedFault {
  if (!b.env.faultInjection) throw new TypeError(faultInjectionMessages.disabled(b.name));
  const checked = checkFault(b.name, fault);
  b.rare?.faults?.remove();
  const plan = new FaultPlan(b.name, checked, (removed) => {
    dropFault(b, removed);
    for (const child of b.children()) dropFault(child, removed);
  });
  holdFault(b, plan);
  for (const child of b.children()) {
    // A child's own injection gives way to its family's.
    child.rare?.faults?.remove();
    holdFault(child, plan);
  }
  return plan;
}

/** @internal Holds `plan`: the calls the breaker admits from now on may get it. */
export function holdFault(b: FaultHolder, plan: FaultPlan): void {
  (b.rare ??= new RareState()).faults = plan;
}

/** `plan` was removed: the breaker's calls get no fault any more. */
function dropFault(b: FaultHolder, plan: FaultPlan): void {
  if (b.rare?.faults === plan) b.rare.faults = undefined;
}
