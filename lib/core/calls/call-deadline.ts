import { breakerMessages } from '../errors/breaker.messages.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import type { Admission, Ticket } from './call-pipeline.js';
import { FaultedCall } from './faulted-call.js';
import { MAX_TIMER_MS } from './timer-delay.js';
import { TrackedCall } from './tracked-call.js';

/**
 * The deadline one call asks for (`execute(fn, { timeoutMs })`,
 * `acquire({ timeoutMs })`), checked before the call is admitted (a bad value
 * found later would leak the admission): a positive number of milliseconds
 * replaces the breaker's `timeoutMs` for that call, longer or shorter;
 * `false` (no deadline) only on a breaker that has none, since the deadline
 * is what stops a hung dependency from holding its callers and a call site
 * must not undo it. `undefined` for no deadline.
 *
 * @internal
 */
export function callDeadlineOf(
  breaker: { readonly name: string; readonly config: ResolvedBreakerOptions },
  given: unknown,
  entry: 'execute' | 'acquire',
): number | undefined {
  if (given === false) {
    const own = breaker.config.timeoutMs;
    if (own === undefined) return undefined;
    throw new TypeError(breakerMessages.callDeadlineRemoved(breaker.name, entry, own));
  }
  if (typeof given === 'number' && given > 0 && given <= MAX_TIMER_MS) return given;
  throw new TypeError(breakerMessages.invalidCallDeadline(breaker.name, entry, given));
}

/** `admission`, its call given the deadline `timeoutMs` (a call that waits in a bulkhead's queue: once admitted). @internal */
export function withDeadline<T>(
  admission: Admission<T>,
  timeoutMs: number | undefined,
): Admission<T> {
  if (admission instanceof Promise)
    return admission.then((ticket) => withDeadline(ticket, timeoutMs) as Ticket<T>);
  if (admission instanceof TrackedCall) admission.setDeadline(timeoutMs);
  else if (admission instanceof FaultedCall) admission.tracked.setDeadline(timeoutMs);
  // A call let through uncounted (forced disabled) has no deadline of the breaker's; a rejection none at all.
  return admission;
}
