/**
 * Every text the engine shows a person. Each names the breaker, the option or
 * the reason, and says what to do about it.
 *
 * @internal
 */
export const breakerMessages = {
  invalidOption: (breaker: string, option: string, value: unknown, expected: string) =>
    `Circuit breaker "${breaker}": option "${option}" must be ${expected}, got ${describe(value)}.`,
  unknownOption: (breaker: string, option: string, known: readonly string[]) =>
    `Circuit breaker "${breaker}": unknown option "${option}". Known options: ${known.join(', ')}.`,
  conflictingOptions: (breaker: string, detail: string) => `Circuit breaker "${breaker}": ${detail}`,
  notAFunction: (breaker: string, value: unknown) =>
    `Circuit breaker "${breaker}": execute() takes the function to protect, got ${describe(value)}.`,
  rejected: (breaker: string, reason: string) => `Circuit breaker "${breaker}" rejected the call: ${reasonText(reason)}.`,
  timedOut: (breaker: string, timeoutMs: number) =>
    `Circuit breaker "${breaker}": the call did not settle within ${timeoutMs} ms and was aborted.`,
  invalidDep: (breaker: string, dep: string, value: unknown, expected: string) =>
    `Circuit breaker "${breaker}": ${dep} must be ${expected}, got ${describe(value)}. Pass a valid ${dep.split(/[.(]/)[0]} or leave it out for the default.`,
  invalidSignal: (breaker: string, value: unknown) =>
    `Circuit breaker "${breaker}": execute() option "signal" must be an AbortSignal, got ${describe(value)}. Pass an AbortController's signal, or leave it out.`,
  classifierThrew: (breaker: string, option: string, fault: unknown) =>
    `Circuit breaker "${breaker}": option "${option}" threw ${faultText(fault)}. The call counted as a failure; make the classifier return an outcome instead of throwing. Later faults of this classifier are not reported again.`,
  classifierAnswered: (breaker: string, option: string, answer: unknown) =>
    `Circuit breaker "${breaker}": option "${option}" returned ${describe(answer)}; expected 'success', 'failure', 'ignored', 'overload' or undefined. The call counted as a failure; fix the classifier. Later faults of this classifier are not reported again.`,
  listenerThrew: (breaker: string, event: string, fault: unknown) =>
    `Circuit breaker "${breaker}": an on('${event}') listener threw ${faultText(fault)}. The call it observed was not affected; catch errors inside the listener. Later faults of this listener are not reported again.`,
  upstreamAnswered: (url: string, status: number, statusText: string) =>
    `${url === '' ? 'The upstream' : `Upstream ${url}`} answered ${status}${statusText === '' ? '' : ` ${statusText}`}.`,
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

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return `a function`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** What was thrown, in a few words, without trusting it: a hostile value may throw when read. */
function faultText(fault: unknown): string {
  try {
    if (fault instanceof Error) return `${fault.name}: ${fault.message}`;
  } catch {
    return 'a value that cannot be read';
  }
  return describe(fault);
}
