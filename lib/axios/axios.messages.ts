/**
 * What `nestjs-circuit-breaker/axios` says when it is wired wrongly: each
 * message names the breaker or the option, and ends with what to do.
 *
 * @internal
 */
export const axiosMessages = {
  notAnInstance: (target: unknown) =>
    `withCircuitBreaker(target): target must be an axios instance or an HttpService (its axiosRef), got ${describe(target)}. Pass axios.create(...) or the HttpService you inject.`,
  noBreaker: (breaker: unknown) =>
    `withCircuitBreaker(target, options): option "breaker" must be a Breaker, got ${describe(breaker)}. Pass registry.get(name), an @InjectCircuitBreaker() breaker or new Breaker(...).`,
  notAFunction: (breaker: string, option: string, value: unknown) =>
    `withCircuitBreaker() with circuit breaker "${breaker}": option "${option}" must be a function, got ${describe(value)}. Pass a function of the request config, or leave the option out.`,
  keyWithoutFamily: (breaker: string) =>
    `withCircuitBreaker() with circuit breaker "${breaker}": option "key" needs a per-key family, and this breaker is a single breaker. Give the breaker a "perKey" option, or leave "key" out.`,
  defaultInstance: (breaker: string) =>
    `provideAxiosCircuitBreaker(client, "${breaker}"): client is axios' process-wide default instance (plain HttpModule, without register(), gives it to HttpService), so circuit breaker "${breaker}" would be in front of every axios call of the process. Import HttpModule.register({...}) (or registerAsync()) in this module, so that its HttpService has an instance of its own; to protect every axios call of the process on purpose, call withCircuitBreaker(axios, { breaker }) yourself.`,
  alreadyProtected: (breaker: string) =>
    `withCircuitBreaker() with circuit breaker "${breaker}": this axios instance already has a circuit breaker. Call the function the first withCircuitBreaker() returned before wiring another one.`,
};

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return typeof value === 'string' ? `"${value}"` : String(value);
}
