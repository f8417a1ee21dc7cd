import type { BreakerSnapshot } from '../../core/index.js';
import type {
  DashboardBreaker,
  DashboardFleet,
  DashboardState,
  DashboardTransitions,
} from '../dashboard-view.interface.js';

/**
 * The page's script. It is sent as its own source text
 * (`Function.prototype.toString()`), so it must use nothing from outside its
 * body: no import (types apart, which compilation erases), no module-level
 * name. Everything it shows comes from the stream as data and is written with
 * `textContent`, never parsed as HTML: breaker names, keys and error messages
 * may come from requests and upstreams.
 *
 * @internal
 */
export function dashboardClient(): void {
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
    const path = `${base}/breakers/${encodeURIComponent(name)}/${force === undefined ? 'reset' : 'force'}`;
    const body = force === undefined ? {} : { ...force, ...(reason ? { reason } : {}) };
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

  function show(view: DashboardBreaker, at: number, fromTick: boolean): void {
    const { snapshot } = view;
    const tile = tileOf(snapshot.name);
    const { field, root } = tile;
    tile.snapshot = snapshot;
    tile.received = performance.now();
    tile.at = at;
    root.dataset.state = snapshot.state;
    const forced = snapshot.forced;
    field('state').textContent = forced === undefined ? snapshot.state : `forced ${forced.state}`;
    field('forced').hidden = forced === undefined;
    if (forced !== undefined)
      field('forced').textContent = `${forced.reason}${forced.by ? ` (${forced.by})` : ''}`;
    const sum = view.aggregate;
    const calls = sum === undefined ? snapshot.window.calls : sum.windowCalls;
    const failures = sum === undefined ? snapshot.window.failures : sum.windowFailures;
    const slow = sum === undefined ? snapshot.window.slowCalls : sum.windowSlowCalls;
    // An open breaker's window starts empty: what it opened on is the rate that matters then.
    const opening =
      snapshot.state === 'open' && calls === 0 ? snapshot.lastTransition?.window : undefined;
    tile.failureRate =
      opening !== undefined ? opening.failureRate : calls === 0 ? 0 : failures / calls;
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
    const last = snapshot.lastTransition;
    field('transition').textContent =
      last === undefined
        ? 'no transition yet'
        : `${last.from} → ${last.to} (${last.reason})` +
          (last.consecutiveFailures !== undefined
            ? `: ${last.consecutiveFailures} failure${last.consecutiveFailures === 1 ? '' : 's'} in a row`
            : last.children !== undefined
              ? `: ${last.children.failing} of ${last.children.known} targets open or half-open`
              : last.window === undefined
                ? ''
                : last.reason === 'slow-call-rate'
                  ? `: ${last.window.slowCalls} of ${last.window.calls} calls slow`
                  : `: ${last.window.failures} of ${last.window.calls} calls failed (${percent(last.window.failureRate)})`) +
          ` at ${clockTime(last.at)}`;
    const failure = snapshot.lastFailure;
    field('failure').hidden = failure === undefined;
    if (failure !== undefined)
      field('failure').textContent =
        `last failure: ${[failure.name, failure.status, failure.message].filter((part) => part !== undefined).join(' ') || failure.category}`;
    const family = snapshot.family;
    field('family').hidden = family === undefined;
    if (family !== undefined) {
      field('familySummary').textContent =
        `${family.keys} of ${family.maxKeys} keys, ${family.unhealthyKeys} unhealthy, ${family.evicted} evicted`;
      const list = field('children');
      list.replaceChildren();
      for (const child of view.topChildren ?? []) {
        const item = document.createElement('li');
        item.dataset.state = child.state;
        item.textContent = `${child.key}: ${child.state}, ${percent(child.failureRate)} of ${child.calls}, ${child.rejected} rejected`;
        list.appendChild(item);
      }
    }
    const shared = snapshot.coordination;
    field('shared').hidden = shared === undefined;
    if (shared !== undefined)
      field('shared').textContent = shared.shared
        ? `shared with the fleet (store errors: ${shared.storeErrors})`
        : `not shared now: deciding alone (store errors: ${shared.storeErrors})`;
    clocks(tile);
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
    tile.field('age').textContent = duration(tile.at - snapshot.since + elapsed);
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

  function showFleet(fleet: DashboardFleet | undefined): void {
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
      item.dataset.state = shared.state === 'open' ? 'open' : 'closed';
      item.textContent =
        `${name}: fleet ${shared.state === 'open' ? `open until ${clockTime(shared.openUntil)}` : shared.state === 'closed' ? 'closed' : 'not shared'}, ` +
        `open on ${breaker.replicasOpen} of ${replicas.length} replicas` +
        (breaker.replicasHalfOpen === 0 ? '' : `, half-open on ${breaker.replicasHalfOpen}`) +
        (breaker.replicasNotClosed > breaker.replicasOpen + breaker.replicasHalfOpen
          ? `, otherwise not closed on ${breaker.replicasNotClosed - breaker.replicasOpen - breaker.replicasHalfOpen}`
          : '');
      list.appendChild(item);
    }
    fleetBox.appendChild(list);
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
    showFleet(state.fleet);
    setStatus(`live, updated ${clockTime(state.at)}`, true);
  });
  source.addEventListener('transitions', (event) => {
    const update = JSON.parse((event as MessageEvent<string>).data) as DashboardTransitions;
    for (const view of update.breakers) show(view, update.at, false);
  });
  setInterval(() => tiles.forEach(clocks), 200);
}
