import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import { describeValue } from '../core/option.messages.js';

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
    `${MODULE}.forRoot() takes an options object ({ path?, enabled?, guard?, control?, intervalMs?, maxStreams?, maxPendingDataLength?, topChildren? }), got ${describeValue(value)}. ` +
    `Pass an object, e.g. ${MODULE}.forRoot({ guard: AdminGuard }), or nothing for the defaults.`,
  expectedPath: "a route path of letters, digits and . _ ~ - between slashes, e.g. 'ops/breakers'",
  expectedGuard:
    'a guard class, a guard instance (with canActivate()) or a function (context) => boolean',
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
  crossSite: 'Control requests must come from the dashboard page itself (same origin).',
  badToken: `Control requests must carry the page's token in the x-circuit-breaker-dashboard header: reload the page.`,
  notJson: 'Control requests must send a JSON body (content-type: application/json).',
  badForceState: (value: unknown) =>
    `"state" must be 'open' or 'closed', got ${describeValue(value)}.`,
  badReason: (max: number) =>
    `"reason", when given, must be a non-empty string of at most ${max} characters.`,
  unknownBreaker: (name: string) => `No circuit breaker is named "${name}".`,
  /** What a force from the dashboard says of itself when the operator gave no reason. */
  defaultReason: 'forced from the dashboard',
  forcedBy: 'circuit breaker dashboard',
  /** Shown on the fleet line when the store's `fleetView()` fails: the page keeps its last answer. */
  fleetViewFailed: (error: unknown) =>
    `the fleet view could not be read: ${error instanceof Error ? error.message : String(error)}`,
};
