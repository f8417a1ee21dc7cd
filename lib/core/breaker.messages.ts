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
