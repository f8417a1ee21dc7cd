import type { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type { Breaker, BreakerSnapshot, BreakerStore } from '../core/index.js';
import type {
  DashboardAggregate,
  DashboardBreaker,
  DashboardChild,
  DashboardFleet,
} from './dashboard-view.interface.js';

const UNHEALTHY: ReadonlySet<string> = new Set(['open', 'half-open', 'isolated']);

/** The tile of one breaker: its snapshot, and for a family the children that fail most. @internal */
export function breakerView(breaker: Breaker, topChildren: number): DashboardBreaker {
  const snapshot = breaker.snapshot();
  if (snapshot.family === undefined) return { snapshot };
  const aggregate: DashboardAggregate = {
    admitted: snapshot.totals.admitted,
    rejected: snapshot.totals.rejected.total,
    fallbacks: snapshot.totals.fallbacks,
    windowCalls: 0,
    windowFailures: 0,
    windowSlowCalls: 0,
  };
  const worst = worstChildren(breaker, topChildren, aggregate);
  return { snapshot, ...(topChildren === 0 ? {} : { topChildren: worst }), aggregate };
}

/** Every tile, in the registry's order. @internal */
export function breakerViews(
  registry: CircuitBreakerRegistry,
  topChildren: number,
): DashboardBreaker[] {
  return registry.list().map((name) => breakerView(registry.get(name), topChildren));
}

/**
 * The `limit` children that fail most: unhealthy ones first, then by failure
 * rate and failures, summing every child into `aggregate` on the way. A
 * bounded insertion into a short list, so a family of `maxKeys` children
 * costs one snapshot each and no sort of them all.
 */
function worstChildren(
  family: Breaker,
  limit: number,
  aggregate: DashboardAggregate,
): DashboardChild[] {
  const worst: DashboardChild[] = [];
  for (const child of family.children()) {
    const snapshot = child.snapshot();
    aggregate.admitted += snapshot.totals.admitted;
    aggregate.rejected += snapshot.totals.rejected.total;
    aggregate.fallbacks += snapshot.totals.fallbacks;
    aggregate.windowCalls += snapshot.window.calls;
    aggregate.windowFailures += snapshot.window.failures;
    aggregate.windowSlowCalls += snapshot.window.slowCalls;
    const view = childView(snapshot);
    let at = worst.length;
    while (at > 0 && worse(view, worst[at - 1]!)) at--;
    if (at >= limit) continue;
    worst.splice(at, 0, view);
    if (worst.length > limit) worst.pop();
  }
  return worst;
}

function childView(snapshot: BreakerSnapshot): DashboardChild {
  return {
    key: snapshot.key ?? '',
    state: snapshot.state,
    failureRate: snapshot.window.failureRate,
    calls: snapshot.window.calls,
    failures: snapshot.window.failures,
    rejected: snapshot.totals.rejected.total,
    retryAfterMs: snapshot.retryAfterMs,
  };
}

function worse(a: DashboardChild, b: DashboardChild): boolean {
  const ua = UNHEALTHY.has(a.state);
  const ub = UNHEALTHY.has(b.state);
  if (ua !== ub) return ua;
  if (a.failureRate !== b.failureRate) return a.failureRate > b.failureRate;
  return a.failures > b.failures;
}

/** What the store says of itself, read without trusting its shape (any `BreakerStore` may be given). */
interface StoreReadings {
  instanceId?: unknown;
  shared?: unknown;
  storeErrors?: unknown;
  droppedWrites?: unknown;
}

/** This replica's view of the fleet, when the module has a store. @internal */
export function fleetView(
  store: BreakerStore | undefined,
  breakers: readonly DashboardBreaker[],
): DashboardFleet | undefined {
  if (store === undefined) return undefined;
  const readings = store as BreakerStore & StoreReadings;
  const fleet: DashboardFleet = { sharingBreakers: 0, sharedNow: 0 };
  if (typeof readings.instanceId === 'string') fleet.instanceId = readings.instanceId;
  if (typeof readings.shared === 'boolean') fleet.shared = readings.shared;
  if (typeof readings.storeErrors === 'number') fleet.storeErrors = readings.storeErrors;
  if (typeof readings.droppedWrites === 'number') fleet.droppedWrites = readings.droppedWrites;
  for (const { snapshot } of breakers) {
    if (snapshot.coordination === undefined) continue;
    fleet.sharingBreakers++;
    if (snapshot.coordination.shared) fleet.sharedNow++;
  }
  return fleet;
}
