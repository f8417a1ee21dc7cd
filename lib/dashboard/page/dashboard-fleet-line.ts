import type { DashboardFleet, DashboardFleetView } from '../dashboard-view.interface.js';

/**
 * The page's fleet line: this replica's view of the fleet and, with a store
 * that lists them, the replicas that report and the fleet's state per
 * breaker. Sent with the page's script as its own source text, so it uses
 * nothing from outside its body; written as text, never parsed as HTML.
 *
 * @internal
 */
export function dashboardFleetLine(fleetBox: HTMLElement, fleet: DashboardFleet | undefined): void {
  const clockTime = (at: number) => new Date(at).toLocaleTimeString();
  // The fleet's state of one breaker; `unavailable`: its Cluster slot did not answer, so it is not known now.
  const fleetStateText = (shared: DashboardFleetView['breakers'][string]['shared']) =>
    shared.state === 'open'
      ? `open until ${clockTime(shared.openUntil)}`
      : shared.state === 'closed'
        ? 'closed'
        : shared.state === 'unavailable'
          ? 'unknown (its Redis node is down)'
          : 'not shared';
  fleetBox.hidden = fleet === undefined;
  if (fleet === undefined) return;
  fleetBox.dataset.shared = String(fleet.shared ?? fleet.sharedNow === fleet.sharingBreakers);
  const line = (name: string, text: string) => {
    const element = document.createElement('div');
    element.dataset.fleet = name;
    element.textContent = text;
    fleetBox.appendChild(element);
    return element;
  };
  fleetBox.replaceChildren();
  line(
    'self',
    `Fleet (this replica's view): ${fleet.instanceId ?? 'this replica'}, ` +
      `${fleet.shared === false ? 'store unreachable, every breaker decides alone' : 'sharing through the store'}; ` +
      `${fleet.sharedNow} of ${fleet.sharingBreakers} breakers share now` +
      (fleet.storeErrors === undefined ? '' : `, store errors: ${fleet.storeErrors}`) +
      (fleet.droppedWrites === undefined ? '' : `, dropped writes: ${fleet.droppedWrites}`),
  );
  const view = fleet.view;
  if (view === undefined) return;
  if (view.error !== undefined) line('error', view.error).dataset.shared = 'false';
  if (view.at === undefined) {
    if (view.error === undefined) line('replicas', 'Replicas reporting: reading…');
    return;
  }
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const replicas = view.replicas;
  line(
    'replicas',
    `Replicas reporting (${replicas.length}): ` +
      (replicas
        .map(
          (r) =>
            `${r.instanceId} (${seconds(r.ageMs)} ago, ${r.shared ? 'sharing' : 'not sharing'})`,
        )
        .join(', ') || 'none'),
  );
  const names = Object.keys(view.breakers);
  names.sort();
  if (names.length === 0) {
    line('breakers', 'Fleet state: every breaker closed on every replica reporting');
    return;
  }
  const list = document.createElement('ul');
  list.dataset.fleet = 'breakers';
  for (const name of names) {
    const breaker = view.breakers[name]!;
    const shared = breaker.shared;
    const item = document.createElement('li');
    item.dataset.fleetBreaker = name;
    item.dataset.state =
      shared.state === 'open' ? 'open' : shared.state === 'unavailable' ? 'unknown' : 'closed';
    item.textContent =
      `${name}: fleet ${fleetStateText(shared)}, ` +
      `open on ${breaker.replicasOpen} of ${replicas.length} replicas` +
      (breaker.replicasHalfOpen === 0 ? '' : `, half-open on ${breaker.replicasHalfOpen}`) +
      (breaker.replicasNotClosed > breaker.replicasOpen + breaker.replicasHalfOpen
        ? `, otherwise not closed on ${breaker.replicasNotClosed - breaker.replicasOpen - breaker.replicasHalfOpen}`
        : '');
    list.appendChild(item);
  }
  fleetBox.appendChild(list);
}
