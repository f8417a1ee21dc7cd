import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import { describeValue } from '../core/options/option.messages.js';

const MODULE = 'CircuitBreakerDashboardModule';

/**
 * Every text the dashboard shows a person: option errors name the option and
 * end with what to do; the HTTP errors say what the request lacked.
 *
 * @internal
 */
export const circuitBreakerDashboardMessages = {
  module: MODULE,
  moduleMissing: () => circuitBreakerMessages.integrationWithoutModule(MODULE),
  notAnObject: (value: unknown) =>
    `${MODULE}.forRoot() takes an options object ({ path?, enabled?, guard?, control?, intervalMs?, maxStreams?, maxPendingDataLength?, topChildren?, allowedHosts? }), got ${describeValue(value)}. ` +
    `Pass an object, e.g. ${MODULE}.forRoot({ guard: AdminGuard }), or nothing for the defaults.`,
  expectedPath: "a route path of letters, digits and . _ ~ - between slashes, e.g. 'ops/breakers'",
  expectedGuard:
    'a guard class, a guard instance (with canActivate()) or a function (context) => boolean',
  expectedAllowedHosts:
    "an array of the host names the dashboard is reached by besides localhost and its address, e.g. ['ops.example.com']",
  expectedAllowedHost:
    "a host name with an optional port ('ops.example.com', 'ops.example.com:8443', '10.0.0.5:3000', '[fd00::1]:3000') " +
    "or a domain with a leading dot, for it and its subdomains ('.example.com')",
  allowedHostIsUrl: (option: string, value: string, host: string) =>
    `${MODULE}: option "${option}" is a URL (${JSON.stringify(value)}): give the host alone, '${host}'.`,
  allowedHostsWildcard: (option: string) =>
    `${MODULE}: option "${option}" would let any host name through, and with it a page that a DNS rebinding points at this machine. ` +
    `List the names your operators and your reverse proxy use instead, e.g. allowedHosts: ['ops.example.com'].`,
  badHost: (host: string | undefined, port: number | undefined) => {
    const at = port === undefined ? '' : `:${port}`;
    return (
      `The circuit breaker dashboard does not answer to the host ${host === undefined ? '(none given)' : JSON.stringify(host)}. ` +
      `Open it as localhost${at}, 127.0.0.1${at}, [::1]${at} or the address it is served on; ` +
      `for another name (a reverse proxy, a port mapping), add that name to the dashboard's allowedHosts option.`
    );
  },
  controlWithoutGuard: () =>
    `${MODULE}: option "control" lets whoever opens the page force breakers open, and no "guard" says who may. ` +
    `Pass guard: a guard class, instance or (context) => boolean that admits only your operators; ` +
    `if a global guard already protects every route, say so with guard: () => true.`,
  notAnAsyncObject: (value: unknown) =>
    `${MODULE}.forRootAsync() takes { imports?, inject?, useFactory, path?, control?, maxPendingDataLength? }, got ${describeValue(value)}. ` +
    `Pass useFactory: (...injected) => ({ guard, enabled, ... }).`,
  factoryResult: (value: unknown) =>
    `${MODULE}.forRootAsync(): useFactory must return (or resolve to) an options object, got ${describeValue(value)}.`,
  routeOptionInFactory: (option: string) =>
    `${MODULE}.forRootAsync(): option "${option}" shapes the routes, which exist before useFactory runs. ` +
    `Give it to forRootAsync() itself, beside useFactory: forRootAsync({ ${option}, useFactory }).`,
  tooManyStreams: (max: number) =>
    `The circuit breaker dashboard already serves ${max} streams (maxStreams); close a page or raise maxStreams.`,
  shuttingDown: 'The application is shutting down.',
  crossSite:
    'The circuit breaker dashboard answers its own page (same origin) and a link to the page, nothing another site sends; behind a reverse proxy that rewrites Host, add the name the browser uses to allowedHosts.',
  duplicateHost: 'A request must carry one Host header (RFC 9112).',
  badToken: `Control requests must carry the page's token in the x-circuit-breaker-dashboard header: reload the page.`,
  notJson: 'Control requests must send a JSON body (content-type: application/json).',
  badBreaker: (value: unknown) =>
    `"breaker" must be the name of a breaker (a non-empty string), got ${describeValue(value)}.`,
  badForceState: (value: unknown) =>
    `"state" must be 'open' or 'closed', got ${describeValue(value)}.`,
  badReason: (max: number) =>
    `"reason", when given, must be a non-empty string of at most ${max} characters.`,
  unknownBreaker: (name: string) => `No circuit breaker is named ${JSON.stringify(name)}.`,
  /** What a force from the dashboard says of itself when the operator gave no reason. */
  defaultReason: 'forced from the dashboard',
  forcedBy: 'circuit breaker dashboard',
  /** Shown on the fleet line when the store's `fleetView()` fails: the page keeps its last answer. */
  fleetViewFailed: (error: unknown) =>
    `the fleet view could not be read: ${error instanceof Error ? error.message : String(error)}`,
};
