import { describeValue } from './option.messages.js';

/**
 * Every text the engine shows a person. Each names the breaker, the option or
 * the reason, and says what to do about it.
 *
 * @internal
 */
export const breakerMessages = {
  unknownEvent: (breaker: string, event: unknown, known: readonly string[]) =>
    `Circuit breaker "${breaker}": on() got ${describeValue(event)}, which is not an event of a breaker. Listen to one of: ${known.join(', ')}.`,
  notAListener: (breaker: string, event: string, listener: unknown) =>
    `Circuit breaker "${breaker}": on("${event}") takes a listener function, got ${describeValue(listener)}. Pass (event) => { ... }.`,
  badName: (name: unknown) => `A circuit breaker needs a non-empty string name, got ${describeValue(name)}. Name it after the dependency and operation it protects, e.g. "payments.charge".`,
  notAFunction: (breaker: string, value: unknown) =>
    `Circuit breaker "${breaker}": execute() takes the function to protect, got ${describeValue(value)}.`,
  rejected: (breaker: string, reason: string) => `Circuit breaker "${breaker}" rejected the call: ${reasonText(reason)}.`,
  timedOut: (breaker: string, timeoutMs: number) =>
    `Circuit breaker "${breaker}": the call did not settle within ${timeoutMs} ms and was aborted.`,
  probeExpired: (breaker: string, maxWaitMs: number) =>
    `Circuit breaker "${breaker}": a half-open probe did not settle within halfOpen.maxWaitMs (${maxWaitMs} ms) and counts as failed.`,
};

function reasonText(reason: string): string {
  switch (reason) {
    case 'open':
      return 'the circuit is open';
    case 'half-open-busy':
      return 'the circuit is half-open and its probe budget is taken';
    case 'isolated':
      return 'the circuit was isolated by hand';
    case 'retry-after':
      return 'the dependency asked callers to wait (Retry-After)';
    default:
      return 'the dependency is overloaded and calls are being shed';
  }
}
