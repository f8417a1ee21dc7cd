import type { DashboardState, DashboardTransitions } from '../dashboard-view.interface.js';
import type {
  dashboardClocks,
  dashboardControls,
  DashboardClientConfig,
  dashboardDetails,
  dashboardRates,
  dashboardShow,
  dashboardTiles,
} from './dashboard-client-tiles.js';
import type {
  dashboardChildText,
  dashboardStateTexts,
  dashboardUnits,
} from './dashboard-client-texts.js';
import type { dashboardFleetLine } from './dashboard-fleet-line.js';
import type { dashboardLimiterLine } from './dashboard-limiter-line.js';

/**
 * The parts of the page's script, each a function sent as its own source
 * text: `dashboardClient` receives them as arguments and assembles them.
 *
 * @internal
 */
export interface DashboardClientParts {
  readonly units: typeof dashboardUnits;
  readonly stateTexts: typeof dashboardStateTexts;
  readonly childText: typeof dashboardChildText;
  readonly tiles: typeof dashboardTiles;
  readonly controls: typeof dashboardControls;
  readonly show: typeof dashboardShow;
  readonly details: typeof dashboardDetails;
  readonly rates: typeof dashboardRates;
  readonly clocks: typeof dashboardClocks;
  readonly fleetLine: typeof dashboardFleetLine;
  readonly limiterLine: typeof dashboardLimiterLine;
}

/**
 * The page's script. It is sent as its own source text
 * (`Function.prototype.toString()`), so it must use nothing from outside its
 * body: no import (types apart, which compilation erases), no module-level
 * name; its parts (`DashboardClientParts`: the texts, the tiles, the fleet
 * line's renderer) are given to it as arguments, sent the same way and held
 * to the same rule. Everything it shows comes from the stream as data and is
 * written with `textContent`, never parsed as HTML: breaker names, keys and
 * error messages may come from requests and upstreams.
 *
 * @internal
 */
export function dashboardClient(parts: DashboardClientParts): void {
  const HISTORY = 120; // two minutes at one snapshot a second
  const config = JSON.parse(
    document.getElementById('cb-config')!.textContent!,
  ) as DashboardClientConfig;
  const base = location.pathname.replace(/\/+$/, '');
  const status = document.getElementById('cb-status')!;
  const fleetBox = document.getElementById('cb-fleet')!;
  const limiterBox = document.getElementById('cb-limiters')!;
  const reasonInput = document.getElementById('cb-reason') as HTMLInputElement | null;

  const units = parts.units();
  const texts = parts.stateTexts(units);
  const clocks = parts.clocks(units, parts.childText(units, texts.openedOnOf));
  const { tiles, tileOf } = parts.tiles(
    document.getElementById('cb-grid')!,
    document.getElementById('cb-tile') as HTMLTemplateElement,
    config.control ? parts.controls(config, base, reasonInput) : undefined,
  );
  const show = parts.show(
    units,
    texts,
    tileOf,
    parts.rates(units, config.intervalMs, HISTORY),
    parts.details(texts),
    clocks,
  );

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
    parts.fleetLine(fleetBox, state.fleet);
    parts.limiterLine(limiterBox, state.limiters);
    setStatus(`live, updated ${units.clockTime(state.at)}`, true);
  });
  source.addEventListener('transitions', (event) => {
    const update = JSON.parse((event as MessageEvent<string>).data) as DashboardTransitions;
    for (const view of update.breakers) show(view, update.at, false);
  });
  setInterval(() => tiles.forEach(clocks), 200);
}
