import { describeFault, describeValue } from './core/options/option.messages.js';

/**
 * Every text about the inbound concurrency limiters: each names the limiter
 * and the site, and each error ends with what to do.
 *
 * @internal
 */
export const concurrencyLimitMessages = {
  /** The subject of option errors about one limiter's definition. */
  definitionSubject: (name: string, site: string) => `Concurrency limiter "${name}" in ${site}`,
  emptyName: () => 'option "limiters" names a limiter "": give every limiter a non-empty name.',
  unknownLimiter: (name: string, site: string, suggestion: string | undefined, known: string[]) =>
    `Concurrency limiter "${name}" used by ${site} is not defined. ` +
    (suggestion === undefined
      ? `Defined limiters: ${known.length === 0 ? '(none)' : known.map((k) => `"${k}"`).join(', ')}. `
      : `Did you mean "${suggestion}"? `) +
    `Fix the name, or define "${name}" in CircuitBreakerModule.forRoot({ limiters }) or forFeatureLimiters({ ... }).`,
  definedTwice: (name: string, first: string, second: string) =>
    `Concurrency limiter "${name}" is defined in two places: ${first} and ${second}. Define it once and name it elsewhere.`,
  invalidFeature: (value: unknown) =>
    `CircuitBreakerModule.forFeatureLimiters() takes a record of limiter name → options, got ${describeValue(value)}. ` +
    "Pass { search: { algorithm: 'fixed', initialLimit: 8 } }.",
  criticalityOfThrew: (fault: unknown) =>
    `CircuitBreakerModule: option "criticalityOf" threw ${describeFault(fault)}; the request's criticality was read from the header, the route or the default instead. Make it return a criticality or undefined. Later errors of this function are not reported again.`,
  criticalityOfAnswered: (answer: unknown, suggestion: string | undefined) =>
    `CircuitBreakerModule: option "criticalityOf" returned ${describeValue(answer)}, which is not a criticality; the request's criticality was read from the header, the route or the default instead.` +
    (suggestion === undefined ? '' : ` Did you mean '${suggestion}'?`) +
    ` Return 'critical-plus', 'critical', 'sheddable-plus', 'sheddable' or undefined. Later answers of this kind are not reported again.`,
  criticalityTwice: (site: string, criticality: string, earlier: string) =>
    `${site}: the criticality is given twice ('${criticality}' and '${earlier}'). Keep one.`,
  limitTwice: (site: string) => `${site} is given twice: a request takes one place. Keep one.`,
  noLimiters: () =>
    'ConcurrencyLimitInterceptor is used, but CircuitBreakerModule defines no limiter. ' +
    'Define one in CircuitBreakerModule.forRoot({ limiters: { default: { maxQueue: 10 } } }): a route that names no limiter uses "default".',
};
