import type { BreakerCallMessage } from '../ports/breaker-channels.js';
import type { CallChannels } from '../ports/breaker-environment.js';
import { EXECUTE, MAY_WAIT, type Admit, type PipelineBreaker } from './call-pipeline.js';
import { callDeadlineOf, withDeadline } from './call-deadline.js';
import { permitOf, runFunction, runMethod } from './call-entries.js';
import { FaultedCall } from './faulted-call.js';
import { runPlain } from './plain-run.js';
import {
  TrackedCall,
  type CallObserver,
  type CallPermit,
  type ProtectedCall,
  type WithSignal,
} from './tracked-call.js';

/** What an observed call reads of its breaker. @internal */
export interface ObservedBreaker extends PipelineBreaker {
  readonly pipeline: Admit;
}

/** Whether anyone listens on a breaker's call channels now (a breaker without any: never). @internal */
export function isObserved(calls: CallChannels | undefined): calls is CallChannels {
  return calls !== undefined && (calls.start.hasSubscribers || calls.settle.hasSubscribers);
}

/**
 * `execute()` while someone listens on the call channels: the general path
 * (the pipeline, then the ticket), between a `callStart` and a `callSettle`
 * of one message. Only a call that found a subscriber comes here, so the
 * closed path of the others stays as it is. @internal
 */
export function observeCall<T>(
  b: ObservedBreaker,
  fn: ProtectedCall<T>,
  signal: AbortSignal | undefined,
  given: number | false | undefined,
  calls: CallChannels,
): Promise<T> {
  // Checked before anything is published or admitted, as execute() checks its other options.
  const timeoutMs = given === undefined ? undefined : callDeadlineOf(b, given, 'execute');
  const [message, result] = begin(b, calls, () => {
    const admission =
      given === undefined
        ? b.pipeline<T>(b, signal, EXECUTE)
        : withDeadline(b.pipeline<T>(b, signal, MAY_WAIT), timeoutMs);
    return typeof admission === 'number'
      ? runPlain(b, fn, admission)
      : runFunction(b, admission, fn, signal);
  });
  publishWhenSettled(result, message, calls.settle);
  return result;
}

/**
 * A decorated method's call (`executeMethod()`) while someone listens on the
 * call channels: as `observeCall()`, with the method run as the ticket says.
 * The decorator comes here only when it found a subscriber. @internal
 */
export function observeMethod<T>(
  b: ObservedBreaker,
  method: (...args: any[]) => T | PromiseLike<T>,
  thisArg: unknown,
  args: unknown[],
  withSignal: WithSignal<T>,
  calls: CallChannels,
): Promise<T> {
  const [message, result] = begin(b, calls, () =>
    runMethod(b, b.pipeline<T>(b, undefined, EXECUTE), method, thisArg, args, withSignal),
  );
  publishWhenSettled(result, message, calls.settle);
  return result;
}

/**
 * Publishes a call's `callStart` and runs `admit` (its admission, and for
 * `execute()` its start): what `admit` throws (a stage's own fault, a
 * refusal of `acquire()`) is the call's settlement, published, and thrown on.
 */
function begin<R>(
  b: ObservedBreaker,
  calls: CallChannels,
  admit: () => R,
): [BreakerCallMessage, R] {
  const message: BreakerCallMessage = { breaker: b.name };
  publish(calls.start, message);
  try {
    return [message, admit()];
  } catch (error) {
    message.error = error;
    publish(calls.settle, message);
    throw error;
  }
}

/** Publishes `message` on `settle` once `result` settles, with its value or its error. */
function publishWhenSettled<T>(
  result: Promise<T>,
  message: BreakerCallMessage,
  settle: CallChannels['settle'],
): void {
  result.then(
    (value) => {
      message.result = value;
      publish(settle, message);
    },
    (error: unknown) => {
      message.error = error;
      publish(settle, message);
    },
  );
}

/**
 * `acquire()` while someone listens on the call channels: `callStart` now,
 * `callSettle` when the permit is settled, by whichever way (`succeed`,
 * `fail`, its deadline, `release`: neither `result` nor `error`). A refusal
 * settles at once, with the `CallRejectedError`; a call let through uncounted
 * (forced `disabled`), which the breaker does not follow, too, with neither. @internal
 */
export function observePermit<T>(
  b: ObservedBreaker,
  given: number | false | undefined,
  calls: CallChannels,
): CallPermit<T> {
  const timeoutMs = given === undefined ? undefined : callDeadlineOf(b, given, 'acquire');
  const [message, permit] = begin(b, calls, () => {
    const admission = b.pipeline<T>(b, undefined, 0);
    return permitOf(
      given === undefined ? admission : withDeadline(admission, timeoutMs),
    ) as CallPermit<T>;
  });
  return observed(permit, message, calls.settle);
}

/**
 * A decorated method's `acquireWaiting()` while someone listens on the call
 * channels: as `observePermit()`, for a caller that may wait for a bulkhead
 * slot (the permit, or its rejection, may come as a promise). @internal
 */
export function observeWaitingPermit<T>(
  b: ObservedBreaker,
  calls: CallChannels,
): CallPermit<T> | Promise<CallPermit<T>> {
  const [message, admitted] = begin(b, calls, () =>
    permitOf(b.pipeline<T>(b, undefined, MAY_WAIT)),
  );
  const settle = calls.settle;
  if (admitted instanceof Promise)
    return admitted.then(
      (permit) => observed(permit, message, settle),
      (error: unknown) => {
        message.error = error;
        publish(settle, message);
        throw error;
      },
    );
  return observed(admitted, message, settle);
}

/** `permit`, whose settlement publishes `message` on `settle`; a call the breaker does not follow, at once. */
function observed<T>(
  permit: CallPermit<T>,
  message: BreakerCallMessage,
  settle: CallChannels['settle'],
): CallPermit<T> {
  const tracked =
    permit instanceof FaultedCall
      ? permit.tracked
      : permit instanceof TrackedCall
        ? permit
        : undefined;
  if (tracked === undefined) publish(settle, message);
  else tracked.observer = new SettleObserver(message, settle);
  return permit;
}

/** Publishes a permit's settlement on `callSettle`. */
class SettleObserver implements CallObserver {
  constructor(
    private readonly message: BreakerCallMessage,
    private readonly channel: CallChannels['settle'],
  ) {}

  settled(resolved: boolean, subject: unknown): void {
    if (resolved) this.message.result = subject;
    else if (subject !== undefined) this.message.error = subject;
    publish(this.channel, this.message);
  }
}

/** Publishes when someone listens; a subscriber that throws is the channel's business, never the call's. */
function publish(channel: CallChannels['start'], message: BreakerCallMessage): void {
  if (!channel.hasSubscribers) return;
  try {
    channel.publish(message);
  } catch {
    // A channel given by hand that throws: the call goes on, as with a listener.
  }
}
