import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import { describeFault, describeValue } from '../core/options/option.messages.js';

const SITE = 'withCircuitBreaker()';

/**
 * Every text the undici integration shows a person: each names the breaker or
 * the option and ends with what to do.
 *
 * @internal
 */
export const undiciMessages = {
  site: SITE,
  notABreaker: (value: unknown) =>
    `${SITE} needs option "breaker", a Breaker, got ${describeValue(value)}. Pass one, e.g. withCircuitBreaker({ breaker: registry.get('upstream') }).`,
  notAFunction: (name: string, option: string, value: unknown) =>
    `${SITE} for circuit breaker "${name}": option "${option}" must be a function of the request, got ${describeValue(value)}. Pass a function, or leave the option out.`,
  notADispatcher: (value: unknown) =>
    `${SITE} takes an undici dispatcher (an Agent, a Pool...) and the options, got ${describeValue(value)} as the dispatcher. Pass one, e.g. withCircuitBreaker(new Agent(), { breaker }), or only the options for compose().`,
  /** undici's own message for an abort without a reason. */
  aborted: 'Request aborted',
  keyWithoutFamily: (name: string) =>
    circuitBreakerMessages.keyMismatch(name, `${SITE} option "key"`, false),
  skipThrew: (name: string, fault: unknown) =>
    `Circuit breaker "${name}" in ${SITE}: option "skip" threw ${describeFault(fault)}; the request went through the breaker. Make skip return true or false. Later faults of this skip function are not reported again.`,
  invalidBodyLimit: (name: string, value: unknown) =>
    `${SITE} for circuit breaker "${name}": option "failureBodyLimit" must be a number of bytes, 0 or more (Infinity allowed), got ${describeValue(value)}. Pass a size such as 65536, or leave the option out.`,
  failureBodyTooLarge: (name: string, limit: number) =>
    `Circuit breaker "${name}" counted this response as a failure and read its body for the caller so as not to hold the connection, but the body passed ${limit} bytes ("failureBodyLimit"), so the request was aborted. Raise failureBodyLimit if such bodies must reach the caller whole.`,
};
