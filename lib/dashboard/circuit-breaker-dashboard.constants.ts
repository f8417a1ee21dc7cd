/** Defaults of `CircuitBreakerDashboardModule.forRoot()`. @publicApi */
export const CIRCUIT_BREAKER_DASHBOARD_DEFAULTS = Object.freeze({
  path: 'circuit-breakers',
  enabled: true,
  control: false,
  intervalMs: 1_000,
  maxStreams: 20,
  maxPendingDataLength: 1_048_576,
  topChildren: 5,
});

/**
 * The header every control request must carry, with the page's token as its
 * value: a cross-site form cannot set a header, and a cross-site script that
 * could would first need the token, which only a page of the same origin can
 * read.
 *
 * @publicApi
 */
export const CIRCUIT_BREAKER_DASHBOARD_TOKEN_HEADER = 'x-circuit-breaker-dashboard';

/** DI token of the checked options, namespaced like every token of the package. @internal */
export const CIRCUIT_BREAKER_DASHBOARD_OPTIONS = 'CIRCUIT_BREAKER:DASHBOARD_OPTIONS';

/** DI token of the page (and its control token), built from the checked options. @internal */
export const CIRCUIT_BREAKER_DASHBOARD_PAGE = 'CIRCUIT_BREAKER:DASHBOARD_PAGE';

/** How long a page waits before reconnecting a stream that ended, in ms. @internal */
export const RECONNECT_MS = 2_000;

/**
 * How long `app.close()` waits for a page to receive the end of its stream
 * before its connection is destroyed, in ms: a page that reads gets it at
 * once, one that stopped reading would otherwise hold the shutdown for as
 * long as it stays connected. @internal
 */
export const SHUTDOWN_GRACE_MS = 500;

/** The most transitions one event carries: a storm of per-key children flipping is summed up, not listed. @internal */
export const MAX_TRANSITIONS_PER_EVENT = 100;

/** Longest reason a control request may give for a force. @internal */
export const MAX_REASON_LENGTH = 200;

/** The path of a route: segments of unreserved URL characters. @internal */
export const DASHBOARD_PATH = /^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/;

/**
 * How often the dashboard reads the store's fleet view (`RedisBreakerStore.fleetView()`) at most,
 * whatever the number of pages and `intervalMs`. @internal
 */
export const FLEET_POLL_MS = 3_000;
