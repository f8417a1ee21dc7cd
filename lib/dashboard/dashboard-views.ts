import type { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type { Breaker, BreakerSnapshot, BreakerStore } from '../core/index.js';
import type {
  DashboardAggregate,
  DashboardBreaker,
  DashboardChild,
  DashboardFleet,
} from './dashboard-view.interface.js';

/** How bad a state looks on a tile, as the Grafana dashboard ranks replicas: isolated > open > half-open > disabled, metrics-only > closed. */
const SEVERITY: Readonly<Record<string, number>> = {
  closed: 0,
  disabled: 1,
  'metrics-only': 1,
  'half-open': 2,
  open: 3,
  isolated: 4,
};
const severity = (state: string) => SEVERITY[state] ?? 1;

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
    worstState: 'closed',
    worstCount: 0,
    worstSince: undefined,
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
 * The `limit` children that fail most: by state as the badge ranks them
 * (`worse()`), then by the rate they opened on, failure rate and failures, summing every child into `aggregate` on the way. A
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
    sumChild(aggregate, snapshot);
    const view = childView(snapshot);
    let at = worst.length;
    while (at > 0 && worse(view, worst[at - 1]!)) at--;
    if (at >= limit) continue;
    worst.splice(at, 0, view);
    if (worst.length > limit) worst.pop();
  }
  return worst;
}

/** Adds a child to its family's sums: its calls, its window, its state, its last transition. */
function sumChild(aggregate: DashboardAggregate, snapshot: BreakerSnapshot): void {
  aggregate.admitted += snapshot.totals.admitted;
  aggregate.rejected += snapshot.totals.rejected.total;
  aggregate.fallbacks += snapshot.totals.fallbacks;
  aggregate.windowCalls += snapshot.window.calls;
  aggregate.windowFailures += snapshot.window.failures;
  aggregate.windowSlowCalls += snapshot.window.slowCalls;
  const last = snapshot.lastTransition;
  // An open child's window starts empty: what it opened on is what the tile shows then
  // (a streak of n failures opened it on n failed calls).
  const evidence =
    last?.window ??
    (last?.consecutiveFailures === undefined
      ? undefined
      : { calls: last.consecutiveFailures, failures: last.consecutiveFailures });
  if (snapshot.state === 'open' && snapshot.window.calls === 0 && evidence !== undefined) {
    const openedOn = (aggregate.openedOn ??= { calls: 0, failures: 0 });
    openedOn.calls += evidence.calls;
    openedOn.failures += evidence.failures;
  }
  // On a tie, the later of the children as the family lists them.
  if (last !== undefined && (aggregate.lastTransition?.at ?? -Infinity) <= last.at)
    aggregate.lastTransition = { key: snapshot.key ?? '', ...last };
  const order = severity(snapshot.state) - severity(aggregate.worstState);
  if (order > 0) {
    aggregate.worstState = snapshot.state;
    aggregate.worstCount = 0;
    aggregate.worstSince = undefined;
  }
  if (order >= 0) {
    aggregate.worstCount++;
    aggregate.worstSince = Math.min(aggregate.worstSince ?? Infinity, snapshot.since);
  }
}

function childView(snapshot: BreakerSnapshot): DashboardChild {
  return {
    key: snapshot.key ?? '',
    state: snapshot.state,
    since: snapshot.since,
    failureRate: snapshot.window.failureRate,
    calls: snapshot.window.calls,
    failures: snapshot.window.failures,
    rejected: snapshot.totals.rejected.total,
    retryAfterMs: snapshot.retryAfterMs,
    ...(snapshot.lastTransition === undefined ? {} : { lastTransition: snapshot.lastTransition }),
  };
}

/**
 * Whether `a` ranks before `b` in the list, as the tile's badge ranks states:
 * the worse state first (so the child the badge names is listed), then, for
 * an open child whose window starts empty, the rate it opened on, then the
 * window's failure rate and failures.
 */
function worse(a: DashboardChild, b: DashboardChild): boolean {
  const order = severity(a.state) - severity(b.state);
  if (order !== 0) return order > 0;
  const opened = openedOnRate(a) - openedOnRate(b);
  if (opened !== 0) return opened > 0;
  if (a.failureRate !== b.failureRate) return a.failureRate > b.failureRate;
  return a.failures > b.failures;
}

/** The failure rate an open child opened on, while its own window is empty; 0 otherwise. */
function openedOnRate(child: DashboardChild): number {
  if (child.state !== 'open' || child.calls > 0) return 0;
  const last = child.lastTransition;
  // A streak of failures opened it on nothing but failures.
  return last?.window?.failureRate ?? (last?.consecutiveFailures === undefined ? 0 : 1);
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
