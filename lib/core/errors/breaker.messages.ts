import { describeFault, describeValue } from '../options/option.messages.js';

/**
 * Every text the engine shows a person. Each names the breaker, the option or
 * the reason; a message about a mistake ends with what to do about it. The
 * outcomes of calls (`rejected`, `timedOut`, `probeExpired`, `upstreamAnswered`)
 * state what happened: they reach end users in 503 and 504 bodies, where
 * advice to a developer does not belong.
 *
 * @internal
 */
export const breakerMessages = {
  unknownEvent: (breaker: string, event: unknown, known: readonly string[]) =>
    `Circuit breaker "${breaker}": on() got ${describeValue(event)}, which is not an event of a breaker. Listen to one of: ${known.join(', ')}.`,
  notAListener: (breaker: string, event: string, listener: unknown) =>
    `Circuit breaker "${breaker}": on("${event}") takes a listener function, got ${describeValue(listener)}. Pass (event) => { ... }.`,
  badForceState: (breaker: string, state: unknown) =>
    `Circuit breaker "${breaker}": force() takes 'open', 'metrics-only' or 'disabled' (or 'closed', an alias of 'metrics-only'), got ${describeValue(state)}. Pass one of them, e.g. force('open', { reason: 'maintenance' }).`,
  badForceOptions: (breaker: string, options: unknown) =>
    `Circuit breaker "${breaker}": force() needs options with a reason, got ${describeValue(options)}. Pass e.g. force('open', { reason: 'payments maintenance', by: 'ops' }).`,
  unknownForceOption: (breaker: string, key: string, suggestion: string | undefined) =>
    `Circuit breaker "${breaker}": force() has no option "${key}".` +
    (suggestion === undefined ? '' : ` Did you mean "${suggestion}"?`) +
    ' Its options are reason, by and untilMs; nothing changed.',
  badForceReason: (breaker: string, reason: unknown) =>
    `Circuit breaker "${breaker}": force() option "reason" must be a non-empty string, got ${describeValue(reason)}. Say why, for whoever reads the snapshot, the health check or the logs.`,
  badForceBy: (breaker: string, by: unknown) =>
    `Circuit breaker "${breaker}": force() option "by" must be a string, got ${describeValue(by)}. Name who set it, or leave it out.`,
  badForceUntil: (breaker: string, until: unknown, now: number) =>
    `Circuit breaker "${breaker}": force() option "untilMs" must be a time of the breaker's clock after now (${now}), got ${describeValue(until)}. Pass e.g. Date.now() + 15 * 60_000, or leave it out to force until release().`,
  reconfigureChild: (breaker: string, family: string) =>
    `Circuit breaker "${breaker}" is a child of the per-key family "${family}": its options are the family's. Call reconfigure() on "${family}", which applies to every child.`,
  reconfigureFixed: (breaker: string, option: string) =>
    `Circuit breaker "${breaker}": option "${option}" cannot change while the application runs (it decides how the breaker is built and shared). Keep its current value (in reconfigure() or the reloaded tree), and restart to change it.`,
  badName: (name: unknown) =>
    `A circuit breaker needs a non-empty string name, got ${describeValue(name)}. Name it after the dependency and operation it protects, e.g. "payments.charge".`,
  notAFunction: (breaker: string, value: unknown) =>
    `Circuit breaker "${breaker}": execute() takes the function to protect, got ${describeValue(value)}. Pass a function, e.g. execute(({ signal }) => fetch(url, { signal })).`,
  notPerKey: (breaker: string) =>
    `Circuit breaker "${breaker}" is not per-key: configure perKey: { maxKeys } to use forKey().`,
  familyMisuse: (breaker: string, method: string) =>
    `Circuit breaker "${breaker}" is a per-key family: call forKey(key).${method}() so that each target has its own breaker.`,
  badKey: (breaker: string, key: unknown) =>
    `Circuit breaker "${breaker}": forKey() takes a string key, got ${key === null ? 'null' : typeof key}. Pass the target's host, endpoint or tenant as a string.`,
  permitSettled: (breaker: string) =>
    `Circuit breaker "${breaker}": this permit was already settled. Settle each permit once, with one of succeed(), fail(), timeOut(), release() or track().`,
  invalidCallDeadline: (breaker: string, entry: string, value: unknown) =>
    `Circuit breaker "${breaker}": ${entry}() option "timeoutMs" must be a positive number of milliseconds up to 2147483647, or false on a breaker built with timeoutMs: false; got ${describeValue(value)}. Pass this call's deadline, or leave it out for the breaker's.`,
  callDeadlineRemoved: (breaker: string, entry: string, ownMs: number) =>
    `Circuit breaker "${breaker}": ${entry}() option "timeoutMs" is false, but the breaker has a deadline of ${ownMs} ms, which one call may change but not remove. Pass a longer deadline for this call, or build the breaker with timeoutMs: false.`,
  invalidFailedOutcome: (breaker: string, outcome: unknown) =>
    `Circuit breaker "${breaker}": permit.fail(error, outcome) got outcome ${describeValue(outcome)}; expected 'failure', 'overload' or undefined. The permit was not settled; pass one of those (succeed() for a success, release() to ignore the call).`,
  rejected: (breaker: string, reason: string) =>
    reason === 'shed'
      ? `Concurrency limiter "${breaker}" shed the request: too many requests are in progress.`
      : `Circuit breaker "${breaker}" rejected the call: ${reasonText(reason)}.`,
  timedOut: (breaker: string, timeoutMs: number) =>
    `Circuit breaker "${breaker}": the call did not settle within ${timeoutMs} ms and was aborted.`,
  invalidDep: (breaker: string, dep: string, value: unknown, expected: string) =>
    `Circuit breaker "${breaker}": ${dep} must be ${expected}, got ${describeValue(value)}. Pass a valid ${dep.split(/[.(]/)[0]} or leave it out for the default.`,
  invalidSignal: (breaker: string, value: unknown) =>
    `Circuit breaker "${breaker}": execute() option "signal" must be an AbortSignal, got ${describeValue(value)}. Pass an AbortController's signal, or leave it out.`,
  classifierThrew: (breaker: string, option: string, fault: unknown) =>
    `Circuit breaker "${breaker}": option "${option}" threw ${describeFault(fault)}. The call counted as a failure; make the classifier return an outcome instead of throwing. Later errors of this classifier are not reported again.`,
  classifierAnswered: (breaker: string, option: string, answer: unknown) =>
    `Circuit breaker "${breaker}": option "${option}" returned ${describeValue(answer)}; expected 'success', 'failure', 'ignored', 'overload' or undefined. The call counted as a failure; fix the classifier. Later errors of this classifier are not reported again.`,
  randomThrew: (breaker: string, source: string, fault: unknown) =>
    `Circuit breaker "${breaker}": ${source} threw ${describeFault(fault)}. The draw counted as 0.5 and the call was not affected; give a function returning a number in [0, 1). Later errors of this source are not reported again.`,
  randomAnswered: (breaker: string, source: string, drawn: unknown) =>
    `Circuit breaker "${breaker}": ${source} returned ${describeValue(drawn)}; expected a number in [0, 1). The draw counted as 0.5 and the call was not affected; fix the source. Later errors of this source are not reported again.`,
  listenerThrew: (breaker: string, event: string, fault: unknown) =>
    `Circuit breaker "${breaker}": an on('${event}') listener threw ${describeFault(fault)}. The call it observed was not affected; catch errors inside the listener. Later errors of this listener are not reported again.`,
  upstreamAnswered: (url: string, status: number, statusText: string) =>
    `${url === '' ? 'The upstream' : `Upstream ${url}`} answered ${status}${statusText === '' ? '' : ` ${statusText}`}.`,
  notABreaker: (value: unknown) =>
    `withRetry() takes a Breaker, got ${describeValue(value)}. Pass the breaker whose calls to retry, e.g. withRetry(registry.get('payments'), { attempts: 3 }).`,
  healthCheckTimedOut: (breaker: string, timeoutMs: number) =>
    `Circuit breaker "${breaker}": the health check did not settle within healthCheck.timeoutMs (${timeoutMs} ms) and counts as failed.`,
  healthCheckFaulted: (breaker: string, fault: unknown) =>
    `Circuit breaker "${breaker}": the health check's turn threw ${describeFault(fault)}. Its health checks go on every healthCheck.intervalMs; if healthCheck.fn is the cause, make it return a plain promise or value. Later faults of this health check are not reported again.`,
  healthCheckStopped: (breaker: string) =>
    `Circuit breaker "${breaker}": the health check is no longer needed (the breaker left the open state).`,
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
    case 'bulkhead-full':
      return 'too many calls are in flight and its queue is full';
    case 'ramp-up':
      return 'the circuit has just closed and admits a growing share of calls';
    default:
      return 'the dependency is overloaded and calls are being shed';
  }
}
