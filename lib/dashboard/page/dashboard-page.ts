import { createHash } from 'node:crypto';
import { CIRCUIT_BREAKER_DASHBOARD_TOKEN_HEADER } from '../circuit-breaker-dashboard.constants.js';
import { dashboardClient, type DashboardClientParts } from './dashboard-client.js';
import {
  dashboardClocks,
  dashboardControls,
  dashboardDetails,
  dashboardRates,
  dashboardShow,
  dashboardTiles,
} from './dashboard-client-tiles.js';
import {
  dashboardChildText,
  dashboardStateTexts,
  dashboardUnits,
} from './dashboard-client-texts.js';
import { dashboardFleetLine } from './dashboard-fleet-line.js';
import { dashboardLimiterLine } from './dashboard-limiter-line.js';
import { DASHBOARD_STYLES } from './dashboard-page.styles.js';

/** The page of one dashboard, and the token its control requests must carry (`''` without control). @internal */
export interface DashboardPage {
  readonly html: string;
  readonly token: string;
}

/** The script's parts, each sent as its own source text: none uses anything from outside its body. */
const CLIENT_PARTS: DashboardClientParts = {
  units: dashboardUnits,
  stateTexts: dashboardStateTexts,
  childText: dashboardChildText,
  tiles: dashboardTiles,
  controls: dashboardControls,
  show: dashboardShow,
  details: dashboardDetails,
  rates: dashboardRates,
  clocks: dashboardClocks,
  fleetLine: dashboardFleetLine,
  limiterLine: dashboardLimiterLine,
};

const SCRIPT = `(${dashboardClient.toString()})({${Object.entries(CLIENT_PARTS)
  .map(([name, part]) => `${name}: ${part.toString()}`)
  .join(',\n')}});`;

const TILE = `<template id="cb-tile"><article class="tile">
<header><h2 data-field="name"></h2><span class="badge" data-field="state"></span></header>
<p class="forced" data-field="forced" hidden></p>
<p class="countdown" data-field="countdown" hidden></p>
<dl class="stats">
<div><dt>failure rate</dt><dd data-field="failureRate"></dd></div>
<div><dt>calls/s</dt><dd data-field="callRate">–</dd></div>
<div><dt>rejected/s</dt><dd data-field="rejectRate">–</dd></div>
<div><dt>slow calls</dt><dd data-field="slow"></dd></div>
<div><dt>fallbacks</dt><dd data-field="fallbackRate">–</dd></div>
<div><dt>in state</dt><dd data-field="age"></dd></div>
</dl>
<svg class="spark" viewBox="0 0 300 40" preserveAspectRatio="none" aria-hidden="true"><polyline class="calls" data-field="sparkCalls" points=""/><polyline class="failures" data-field="sparkFailures" points=""/></svg>
<p class="legend"><span class="c">calls/s</span> and <span class="f">failure rate</span>, last 2 minutes</p>
<p class="why" data-field="transition"></p>
<p class="why" data-field="failure" hidden></p>
<div class="family" data-field="family" hidden><p data-field="familySummary"></p><ol data-field="children"></ol></div>
<p class="shared" data-field="shared" hidden></p>
<p class="error" data-field="error" role="alert" hidden></p>
</article></template>`;

/**
 * The whole dashboard as one HTML document: markup, style and script inline,
 * nothing fetched but its own stream (it works offline, behind a firewall).
 * Its configuration is a JSON data block, which no policy needs to allow:
 * the script and the style are the same for every dashboard, and so are the
 * headers (`dashboardPageHeaders()`).
 *
 * @internal
 */
export function dashboardPage(config: {
  control: boolean;
  token: string;
  intervalMs: number;
}): DashboardPage {
  const data = JSON.stringify({
    ...config,
    header: CIRCUIT_BREAKER_DASHBOARD_TOKEN_HEADER,
  }).replace(/</g, '\\u003c');
  const reason = config.control
    ? '<input id="cb-reason" type="text" maxlength="200" placeholder="reason for a force (optional)" aria-label="reason for a force">'
    : '';
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Circuit breakers</title>
<link rel="icon" href="data:,">
<style>${DASHBOARD_STYLES}</style>
</head>
<body>
<header class="top"><h1>Circuit breakers</h1>${reason}<span id="cb-status" data-live="false">connecting…</span></header>
<div id="cb-fleet" hidden></div>
<div id="cb-limiters" hidden></div>
<main id="cb-grid"></main>
${TILE}
<script type="application/json" id="cb-config">${data}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
  return { html, token: config.token };
}

/**
 * The headers of every dashboard page. The Content-Security-Policy allows
 * exactly its script and its style (by hash), and connections to its own
 * origin only; no frame may embed it (its buttons cannot be clickjacked).
 *
 * @internal
 */
export function dashboardPageHeaders(): Readonly<Record<string, string>> {
  const csp = [
    "default-src 'none'",
    `script-src '${hash(SCRIPT)}'`,
    `style-src '${hash(DASHBOARD_STYLES)}'`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}

function hash(text: string): string {
  return `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;
}
