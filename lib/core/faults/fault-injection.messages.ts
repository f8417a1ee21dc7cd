import { describeValue } from '../options/option.messages.js';

/**
 * The texts of fault injection. The injected errors state what happened (they
 * may reach an end user in a 5xx body during a game day); the mistakes say
 * what to do.
 *
 * @internal
 */
export const faultInjectionMessages = {
  injectedFailure: (breaker: string) =>
    `Circuit breaker "${breaker}": injected failure (fault injection); the dependency was not called.`,
  injectedOverload: (breaker: string, retryAfterMs: number | undefined) =>
    `Circuit breaker "${breaker}": injected overload${retryAfterMs === undefined ? '' : ` (Retry-After ${retryAfterMs} ms)`} (fault injection); the dependency was not called.`,
  disabled: (breaker: string) =>
    `Circuit breaker "${breaker}": fault injection is off, so injectFault() is refused (it must never happen by mistake in production). Turn it on with CircuitBreakerModule.forRoot({ faultInjection: true }) for a game day, use CircuitBreakerTestingModule from nestjs-circuit-breaker/testing in tests (on by default), or pass { faultInjection: true } in the deps of a Breaker built by hand.`,
  badFault: (breaker: string, fault: unknown) =>
    `Circuit breaker "${breaker}": injectFault() takes { fail?, latencyMs?, overload?, rate?, random? }, got ${describeValue(fault)}. Pass e.g. injectFault({ fail: true, rate: 0.5 }).`,
  unknownKey: (breaker: string, key: string, suggestion: string | undefined) =>
    `Circuit breaker "${breaker}": injectFault() has no option "${key}".` +
    (suggestion === undefined ? '' : ` Did you mean "${suggestion}"?`) +
    ' Use fail, latencyMs, overload, rate or random.',
  badOption: (breaker: string, option: string, value: unknown, expected: string) =>
    `Circuit breaker "${breaker}": injectFault() option "${option}" must be ${expected}, got ${describeValue(value)}. Fix it, or leave it out.`,
  nothingToInject: (breaker: string) =>
    `Circuit breaker "${breaker}": injectFault() was given no fault. Pass fail, latencyMs or overload (with rate to apply it to a share of calls).`,
  failAndOverload: (breaker: string) =>
    `Circuit breaker "${breaker}": injectFault() takes fail or overload, not both: a call either fails or is refused as overloaded. Inject one of them.`,
};
