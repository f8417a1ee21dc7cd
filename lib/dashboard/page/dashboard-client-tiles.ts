import type { BreakerSnapshot } from '../../core/index.js';
import type { DashboardBreaker, DashboardChild } from '../dashboard-view.interface.js';
import type { DashboardStateTexts, DashboardUnits } from './dashboard-client-texts.js';

// The page's tiles: one per breaker, made on its first snapshot and written
// on each. Each function here is sent as its own source text with the
// script (see `dashboardClient`), so it uses nothing from outside its body
// but its arguments; types are erased by compilation.

/** The page's configuration, from its JSON data block. @internal */
export interface DashboardClientConfig {
  control: boolean;
  token: string;
  header: string;
  intervalMs: number;
}

/** @internal */
export interface TileCounts {
  admitted: number;
  rejected: number;
  fallbacks: number;
}

/** @internal */
export interface TilePoint {
  failureRate: number;
  callRate: number;
}

/** @internal */
export interface Tile {
  root: HTMLElement;
  field: (name: string) => HTMLElement;
  snapshot: BreakerSnapshot;
  /** performance.now() when `snapshot` arrived, and the breakers' clock then. */
  received: number;
  at: number;
  /** What the rates are computed from: the breaker's totals, or a family's summed over its children. */
  counts: TileCounts;
  previous: { at: number; counts: TileCounts } | undefined;
  history: TilePoint[];
  failureRate: number;
  /** Since when it shows its state: a family's worst children's, when they are worse than it. */
  since: number;
  children: DashboardChild[];
}

/**
 * The tiles by breaker name, and the function that finds a breaker's tile or
 * makes it from the page's template, with its buttons when `addControls` is
 * given. @internal
 */
export function dashboardTiles(
  grid: HTMLElement,
  template: HTMLTemplateElement,
  addControls: ((root: HTMLElement, name: string) => void) | undefined,
) {
  const tiles = new Map<string, Tile>();
  function tileOf(name: string): Tile {
    let tile = tiles.get(name);
    if (tile !== undefined) return tile;
    const root = (template.content.firstElementChild as HTMLElement).cloneNode(true) as HTMLElement;
    root.dataset.breaker = name;
    const field = (id: string) => root.querySelector<HTMLElement>(`[data-field="${id}"]`)!;
    field('name').textContent = name;
    if (addControls !== undefined) addControls(root, name);
    grid.appendChild(root);
    tile = {
      root,
      field,
      snapshot: undefined!,
      received: 0,
      at: 0,
      counts: { admitted: 0, rejected: 0, fallbacks: 0 },
      previous: undefined,
      history: [],
      failureRate: 0,
      since: 0,
      children: [],
    };
    tiles.set(name, tile);
    return tile;
  }
  return { tiles, tileOf };
}

/** The buttons of a tile, and the requests they send. @internal */
export function dashboardControls(
  config: DashboardClientConfig,
  base: string,
  reasonInput: HTMLInputElement | null,
) {
  async function control(root: HTMLElement, name: string, force: object | undefined) {
    const error = root.querySelector<HTMLElement>('[data-field="error"]')!;
    const reason = reasonInput?.value.trim();
    // The name goes in the body: any breaker name works there, "." and ".." included.
    const path = `${base}/${force === undefined ? 'reset' : 'force'}`;
    const body = {
      breaker: name,
      ...(force === undefined ? {} : { ...force, ...(reason ? { reason } : {}) }),
    };
    try {
      const response = await fetch(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [config.header]: config.token },
        body: JSON.stringify(body),
        credentials: 'same-origin',
      });
      if (response.ok) {
        error.hidden = true;
        return;
      }
      const answer = (await response.json().catch(() => ({}))) as { message?: unknown };
      error.textContent = `${response.status}: ${String(answer.message ?? response.statusText)}`;
    } catch (failure) {
      error.textContent = `request failed: ${String(failure)}`;
    }
    error.hidden = false;
  }

  return function addControls(root: HTMLElement, name: string): void {
    const box = document.createElement('div');
    box.className = 'controls';
    const actions: [string, string, object | undefined][] = [
      ['force-open', 'Force open', { state: 'open' }],
      ['force-closed', 'Force closed', { state: 'closed' }],
      ['reset', 'Reset', undefined],
    ];
    for (const [action, label, body] of actions) {
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.action = action;
      button.textContent = label;
      button.addEventListener('click', () => void control(root, name, body));
      box.appendChild(button);
    }
    root.appendChild(box);
  };
}

/**
 * Writes a breaker's view into its tile: its state, its window's rates (an
 * open breaker's window starts empty: then the rate it opened on), and what
 * it counts for the rates, computed by `rates` between scheduled snapshots
 * (`fromTick`). The rest is written by `details`, then `clocks`. @internal
 */
export function dashboardShow(
  { percent }: DashboardUnits,
  { shownState, openedOnOf }: DashboardStateTexts,
  tileOf: (name: string) => Tile,
  rates: (tile: Tile, at: number) => void,
  details: (tile: Tile, view: DashboardBreaker) => void,
  clocks: (tile: Tile) => void,
) {
  return function show(view: DashboardBreaker, at: number, fromTick: boolean): void {
    const { snapshot } = view;
    const tile = tileOf(snapshot.name);
    const { field, root } = tile;
    tile.snapshot = snapshot;
    tile.received = performance.now();
    tile.at = at;
    const shown = shownState(view);
    tile.since = shown.since;
    tile.children = view.topChildren ?? [];
    root.dataset.state = shown.state;
    field('state').textContent = shown.badge;
    const forced = snapshot.forced;
    field('forced').hidden = forced === undefined;
    if (forced !== undefined)
      field('forced').textContent = `${forced.reason}${forced.by ? ` (${forced.by})` : ''}`;
    const sum = view.aggregate;
    const calls = sum === undefined ? snapshot.window.calls : sum.windowCalls;
    const failures = sum === undefined ? snapshot.window.failures : sum.windowFailures;
    const slow = sum === undefined ? snapshot.window.slowCalls : sum.windowSlowCalls;
    // An open breaker's window starts empty: what it opened on is the rate that matters then.
    const opening =
      shown.state !== 'open' || calls !== 0
        ? undefined
        : sum === undefined
          ? openedOnOf(snapshot.lastTransition)
          : sum.openedOn;
    tile.failureRate =
      opening !== undefined
        ? opening.calls === 0
          ? 0
          : opening.failures / opening.calls
        : calls === 0
          ? 0
          : failures / calls;
    field('failureRate').textContent = `${percent(tile.failureRate)} of ${opening?.calls ?? calls}`;
    field('slow').textContent = `${slow} (${percent(calls === 0 ? 0 : slow / calls)})`;
    tile.counts =
      sum === undefined
        ? {
            admitted: snapshot.totals.admitted,
            rejected: snapshot.totals.rejected.total,
            fallbacks: snapshot.totals.fallbacks,
          }
        : { admitted: sum.admitted, rejected: sum.rejected, fallbacks: sum.fallbacks };
    if (fromTick) rates(tile, at);
    details(tile, view);
    clocks(tile);
  };
}

/** A tile's last transition, last failure, family summary and sharing. @internal */
export function dashboardDetails({ transitionText }: DashboardStateTexts) {
  return function details({ field, snapshot }: Tile, view: DashboardBreaker): void {
    field('transition').textContent = transitionText(view);
    const failure = snapshot.lastFailure;
    field('failure').hidden = failure === undefined;
    if (failure !== undefined)
      field('failure').textContent =
        `last failure: ${[failure.name, failure.status, failure.message].filter((part) => part !== undefined).join(' ') || failure.category}`;
    const family = snapshot.family;
    field('family').hidden = family === undefined;
    if (family !== undefined)
      field('familySummary').textContent =
        `${family.keys} of ${family.maxKeys} keys, ${family.unhealthyKeys} unhealthy, ${family.evicted} evicted`;
    const shared = snapshot.coordination;
    field('shared').hidden = shared === undefined;
    if (shared !== undefined)
      field('shared').textContent = shared.shared
        ? `shared with the fleet (store errors: ${shared.storeErrors})`
        : `not shared now: deciding alone (store errors: ${shared.storeErrors})`;
  };
}

/** Rates between two scheduled snapshots, and the sparkline's next point. @internal */
export function dashboardRates(
  { percent, perSecond }: DashboardUnits,
  intervalMs: number,
  historyLength: number,
) {
  return function rates(tile: Tile, at: number): void {
    const counts = tile.counts;
    const previous = tile.previous;
    tile.previous = { at, counts };
    if (previous === undefined) return;
    const seconds = at > previous.at ? (at - previous.at) / 1000 : intervalMs / 1000;
    // A family's sums drop when it evicts a child: never a negative rate.
    const delta = (name: keyof TileCounts) => Math.max(0, counts[name] - previous.counts[name]);
    const rejected = delta('rejected');
    const calls = delta('admitted') + rejected;
    const fallbacks = delta('fallbacks');
    tile.field('callRate').textContent = perSecond(calls / seconds);
    tile.field('rejectRate').textContent = perSecond(rejected / seconds);
    tile.field('fallbackRate').textContent =
      calls === 0 ? '–' : percent(Math.min(1, fallbacks / calls));
    tile.history.push({ failureRate: tile.failureRate, callRate: calls / seconds });
    if (tile.history.length > historyLength) tile.history.shift();
    const line = (pick: (point: TilePoint) => number, max: number) =>
      tile.history
        .map((point, i) => {
          // The newest point on the right edge: the line grows leftwards as history builds up.
          const x = 300 - ((tile.history.length - 1 - i) * 300) / (historyLength - 1);
          return `${x.toFixed(1)},${(38 - (pick(point) / max) * 36).toFixed(1)}`;
        })
        .join(' ');
    const busiest = Math.max(1, ...tile.history.map((point) => point.callRate));
    tile.field('sparkCalls').setAttribute(
      'points',
      line((point) => point.callRate, busiest),
    );
    tile.field('sparkFailures').setAttribute(
      'points',
      line((point) => point.failureRate, 1),
    );
  };
}

/** What moves between snapshots: time in state, the listed children, and the countdown to the next probe. @internal */
export function dashboardClocks(
  { duration }: DashboardUnits,
  childText: (child: DashboardChild, at: number, elapsed: number) => string,
) {
  return function clocks(tile: Tile): void {
    const { snapshot } = tile;
    const elapsed = performance.now() - tile.received;
    tile.field('age').textContent = duration(tile.at - tile.since + elapsed);
    if (snapshot.family !== undefined) {
      const list = tile.field('children');
      list.replaceChildren();
      for (const child of tile.children) {
        const item = document.createElement('li');
        item.dataset.state = child.state;
        item.textContent = childText(child, tile.at, elapsed);
        list.appendChild(item);
      }
    }
    const countdown = tile.field('countdown');
    const round = snapshot.state === 'half-open' ? snapshot.halfOpen : undefined;
    if (round !== undefined) {
      countdown.hidden = false;
      countdown.textContent = `probing: ${round.probesAdmitted} of ${snapshot.thresholds.maxProbes} admitted, ${round.probesInFlight} in flight, ${round.probesSucceeded} succeeded`;
      return;
    }
    const left = snapshot.retryAfterMs === undefined ? undefined : snapshot.retryAfterMs - elapsed;
    countdown.hidden = left === undefined;
    if (left !== undefined)
      countdown.textContent =
        snapshot.state === 'open'
          ? left > 0
            ? `next probe in ${duration(left)}`
            : 'probe due: the next call probes'
          : `paused by Retry-After: ${duration(left)}`;
  };
}
