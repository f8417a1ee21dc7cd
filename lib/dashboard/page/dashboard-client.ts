import type { BreakerSnapshot } from '../../core/index.js';
import type {
  DashboardBreaker,
  DashboardChild,
  DashboardState,
  DashboardTransitions,
} from '../dashboard-view.interface.js';
import type { dashboardFleetLine } from './dashboard-fleet-line.js';

/**
 * The page's script. It is sent as its own source text
 * (`Function.prototype.toString()`), so it must use nothing from outside its
 * body: no import (types apart, which compilation erases), no module-level
 * name; the fleet line's renderer is given to it as an argument, sent the
 * same way. Everything it shows comes from the stream as data and is written with
 * `textContent`, never parsed as HTML: breaker names, keys and error messages
 * may come from requests and upstreams.
 *
 * @internal
 */
export function dashboardClient(showFleet: typeof dashboardFleetLine): void {
  interface Config {
    control: boolean;
    token: string;
    header: string;
    intervalMs: number;
  }
  interface Counts {
    admitted: number;
    rejected: number;
    fallbacks: number;
  }
  interface Point {
    failureRate: number;
    callRate: number;
  }
  interface Tile {
    root: HTMLElement;
    field: (name: string) => HTMLElement;
    snapshot: BreakerSnapshot;
    /** performance.now() when `snapshot` arrived, and the breakers' clock then. */
    received: number;
    at: number;
    /** What the rates are computed from: the breaker's totals, or a family's summed over its children. */
    counts: Counts;
    previous: { at: number; counts: Counts } | undefined;
    history: Point[];
    failureRate: number;
    /** Since when it shows its state: a family's worst children's, when they are worse than it. */
    since: number;
    children: DashboardChild[];
  }
  const HISTORY = 120; // two minutes at one snapshot a second
  const config = JSON.parse(document.getElementById('cb-config')!.textContent!) as Config;
  const base = location.pathname.replace(/\/+$/, '');
  const grid = document.getElementById('cb-grid')!;
  const status = document.getElementById('cb-status')!;
  const fleetBox = document.getElementById('cb-fleet')!;
  const template = document.getElementById('cb-tile') as HTMLTemplateElement;
  const reasonInput = document.getElementById('cb-reason') as HTMLInputElement | null;
  const tiles = new Map<string, Tile>();

  const percent = (ratio: number) => `${(ratio * 100).toFixed(ratio > 0 && ratio < 0.1 ? 1 : 0)}%`;
  const perSecond = (value: number) => (value >= 10 ? value.toFixed(0) : value.toFixed(1));
  const duration = (ms: number) => {
    const s = Math.max(0, ms) / 1000;
    if (s < 10) return `${s.toFixed(1)} s`;
    if (s < 120) return `${Math.floor(s)} s`;
    if (s < 7200) return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  };
  const clockTime = (at: number) => new Date(at).toLocaleTimeString();

  function tileOf(name: string): Tile {
    let tile = tiles.get(name);
    if (tile !== undefined) return tile;
    const root = (template.content.firstElementChild as HTMLElement).cloneNode(true) as HTMLElement;
    root.dataset.breaker = name;
    const field = (id: string) => root.querySelector<HTMLElement>(`[data-field="${id}"]`)!;
    field('name').textContent = name;
    if (config.control) addControls(root, name);
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

  function addControls(root: HTMLElement, name: string): void {
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
  }

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

  /** How bad a state looks, as the server ranks a family's children: isolated > open > half-open > disabled > closed. */
  const severity = (state: string) =>
    ({ closed: 0, disabled: 1, 'half-open': 2, open: 3, isolated: 4 })[state] ?? 1;

  /** The state a tile shows: a family's worst child when it is worse than the family's own. */
  function shownState(view: DashboardBreaker): { state: string; since: number; badge: string } {
    const { snapshot, aggregate } = view;
    const forced = snapshot.forced;
    const own = { state: snapshot.state, since: snapshot.since, badge: snapshot.state };
    if (forced !== undefined) return { ...own, badge: `forced ${forced.state}` };
    if (aggregate === undefined || severity(aggregate.worstState) <= severity(snapshot.state))
      return own;
    return {
      state: aggregate.worstState,
      since: aggregate.worstSince ?? snapshot.since,
      badge: `${aggregate.worstState} (${aggregate.worstCount} of ${snapshot.family?.keys ?? aggregate.worstCount} keys)`,
    };
  }

  /** The last transition: a family's newest one among its own and its children's. */
  /** What an opening was decided on: its window, or a streak of n failures as n failed calls. */
  function openedOnOf(
    last: DashboardBreaker['snapshot']['lastTransition'] | DashboardChild['lastTransition'],
  ): { calls: number; failures: number } | undefined {
    if (last === undefined) return undefined;
    if (last.window !== undefined) return last.window;
    const streak = last.consecutiveFailures;
    return streak === undefined ? undefined : { calls: streak, failures: streak };
  }

  function transitionText(view: DashboardBreaker): string {
    const own = view.snapshot.lastTransition;
    const child = view.aggregate?.lastTransition;
    const last = child !== undefined && (own === undefined || child.at > own.at) ? child : own;
    if (last === undefined) return 'no transition yet';
    return (
      (last === child ? `${child.key}: ` : '') +
      `${last.from} → ${last.to} (${last.reason})` +
      (last.consecutiveFailures !== undefined
        ? `: ${last.consecutiveFailures} failure${last.consecutiveFailures === 1 ? '' : 's'} in a row`
        : last.children !== undefined
          ? `: ${last.children.failing} of ${last.children.known} targets open or half-open`
          : last.window === undefined
            ? ''
            : last.reason === 'slow-call-rate'
              ? `: ${last.window.slowCalls} of ${last.window.calls} calls slow`
              : `: ${last.window.failures} of ${last.window.calls} calls failed (${percent(last.window.failureRate)})`) +
      ` at ${clockTime(last.at)}`
    );
  }

  function show(view: DashboardBreaker, at: number, fromTick: boolean): void {
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
    clocks(tile);
  }

  /** A listed child: its state since when, its next probe, the rate it is judged on. */
  function childText(child: DashboardChild, tile: Tile, elapsed: number): string {
    const left = child.retryAfterMs === undefined ? undefined : child.retryAfterMs - elapsed;
    const probe =
      left === undefined
        ? ''
        : child.state === 'open'
          ? left > 0
            ? `, next probe in ${duration(left)}`
            : ', probe due'
          : `, paused by Retry-After: ${duration(left)}`;
    const opened =
      child.state === 'open' && child.calls === 0 ? openedOnOf(child.lastTransition) : undefined;
    const rate =
      opened === undefined
        ? child.failureRate
        : opened.calls === 0
          ? 0
          : opened.failures / opened.calls;
    return (
      `${child.key}: ${child.state} since ${clockTime(child.since)} (${duration(tile.at - child.since + elapsed)})` +
      `${probe}, ${percent(rate)} of ${opened?.calls ?? child.calls}, ${child.rejected} rejected`
    );
  }

  /** Rates between two scheduled snapshots, and the sparkline's next point. */
  function rates(tile: Tile, at: number): void {
    const counts = tile.counts;
    const previous = tile.previous;
    tile.previous = { at, counts };
    if (previous === undefined) return;
    const seconds = at > previous.at ? (at - previous.at) / 1000 : config.intervalMs / 1000;
    // A family's sums drop when it evicts a child: never a negative rate.
    const delta = (name: keyof Counts) => Math.max(0, counts[name] - previous.counts[name]);
    const rejected = delta('rejected');
    const calls = delta('admitted') + rejected;
    const fallbacks = delta('fallbacks');
    tile.field('callRate').textContent = perSecond(calls / seconds);
    tile.field('rejectRate').textContent = perSecond(rejected / seconds);
    tile.field('fallbackRate').textContent =
      calls === 0 ? '–' : percent(Math.min(1, fallbacks / calls));
    tile.history.push({ failureRate: tile.failureRate, callRate: calls / seconds });
    if (tile.history.length > HISTORY) tile.history.shift();
    const line = (pick: (point: Point) => number, max: number) =>
      tile.history
        .map((point, i) => {
          // The newest point on the right edge: the line grows leftwards as history builds up.
          const x = 300 - ((tile.history.length - 1 - i) * 300) / (HISTORY - 1);
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
  }

  /** What moves between snapshots: time in state and the countdown to the next probe. */
  function clocks(tile: Tile): void {
    const { snapshot } = tile;
    const elapsed = performance.now() - tile.received;
    tile.field('age').textContent = duration(tile.at - tile.since + elapsed);
    if (snapshot.family !== undefined) {
      const list = tile.field('children');
      list.replaceChildren();
      for (const child of tile.children) {
        const item = document.createElement('li');
        item.dataset.state = child.state;
        item.textContent = childText(child, tile, elapsed);
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
  }

  function setStatus(text: string, live: boolean): void {
    status.textContent = text;
    status.dataset.live = String(live);
  }

  const source = new EventSource(`${base}/stream`);
  source.addEventListener('open', () => setStatus('live', true));
  source.addEventListener('error', () =>
    setStatus(source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…', false),
  );
  source.addEventListener('snapshot', (event) => {
    const state = JSON.parse((event as MessageEvent<string>).data) as DashboardState;
    for (const view of state.breakers) show(view, state.at, true);
    showFleet(fleetBox, state.fleet);
    setStatus(`live, updated ${clockTime(state.at)}`, true);
  });
  source.addEventListener('transitions', (event) => {
    const update = JSON.parse((event as MessageEvent<string>).data) as DashboardTransitions;
    for (const view of update.breakers) show(view, update.at, false);
  });
  setInterval(() => tiles.forEach(clocks), 200);
}
