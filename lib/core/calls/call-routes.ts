import { NOT_TIMED, UNCOUNTED } from './call-tokens.js';
import type { CallOutcome, FailureCategory } from '../state/breaker-state.js';
import type { CircuitOpenError } from '../errors/breaker.errors.js';
import { deferredRejection } from './deferred-rejection.js';
import { FaultedAdmission } from '../faults/fault-injection.js';
import { FaultedCall } from './faulted-call.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import {
  TrackedCall,
  type CallContext,
  type CallOwner,
  type CallPermit,
  type ProtectedCall,
  type WithSignal,
} from './tracked-call.js';
import { isCall, UncountedCall } from './uncounted-call.js';

// Shared by every call that has neither a caller signal nor a deadline.
const NO_SIGNAL: CallContext = Object.freeze({ signal: undefined });

type Method<T> = (...args: any[]) => T | PromiseLike<T>;

/** What a call's route reads of its breaker: admission, the plain path, and settlement. @internal */
export interface RoutedBreaker extends CallOwner {
  readonly timed: boolean;
  readonly parent: RoutedBreaker | undefined;
  monotonic(): number;
  /** Whether this is a child whose family is not closed: its calls pass the family's gate first. */
  underFamilyGate(): boolean;
  admitOwn(): number | CircuitOpenError | FaultedAdmission;
  admitAsFamily(): number | CircuitOpenError;
  runPlain<T>(fn: ProtectedCall<T>, token: number, startedAt: number): Promise<T>;
  runMethod<T>(
    method: Method<T>,
    thisArg: unknown,
    args: unknown[],
    token: number,
    startedAt: number,
  ): Promise<T>;
  settle(
    token: number,
    outcome: CallOutcome,
    subject: unknown,
    startedAt: number,
    category: FailureCategory | undefined,
    config?: ResolvedBreakerOptions,
  ): void;
}

/** @internal The rest of `execute()`, past its checks and the guard. */
export function pass<T>(
  b: RoutedBreaker,
  fn: ProtectedCall<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (b.underFamilyGate()) {
    const call = familyCall<T>(b, signal);
    return isCall(call) ? call.run(fn, signal) : deferredRejection(call);
  }
  const token = b.admitOwn();
  if (typeof token !== 'number')
    return token instanceof FaultedAdmission
      ? faulted<T>(b, token).run(fn, signal)
      : deferredRejection(token);
  const startedAt = b.timed ? b.monotonic() : NOT_TIMED;
  // No deadline (timeoutMs: false), no caller signal: no call object, no promise of our own.
  if (token >= 0 && signal === undefined && b.config.timeoutMs === undefined)
    return b.runPlain(fn, token, startedAt);
  // Negative, so the plain path never needs to look for it.
  if (token === UNCOUNTED) return new UncountedCall<T>(signal).run(fn);
  return new TrackedCall<T>(b, token, startedAt).run(fn, signal);
}

/** @internal The rest of `executeMethod()`, past the guard. */
export function passMethod<T>(
  b: RoutedBreaker,
  method: Method<T>,
  thisArg: unknown,
  args: unknown[],
  withSignal: WithSignal<T>,
): Promise<T> {
  if (b.underFamilyGate()) {
    const call = familyCall<T>(b, undefined);
    return isCall(call)
      ? call.runMethod(withSignal, method, thisArg, args)
      : deferredRejection(call);
  }
  const token = b.admitOwn();
  if (typeof token !== 'number')
    return token instanceof FaultedAdmission
      ? faulted<T>(b, token).runMethod(withSignal, method, thisArg, args)
      : deferredRejection(token);
  const startedAt = b.timed ? b.monotonic() : NOT_TIMED;
  if (token >= 0 && b.config.timeoutMs === undefined)
    return b.runMethod(method, thisArg, args, token, startedAt);
  if (token === UNCOUNTED)
    return new UncountedCall<T>(undefined).runMethod(withSignal, method, thisArg, args);
  // The context, not its signal: reading the signal is what makes its AbortController.
  return new TrackedCall<T>(b, token, startedAt).runMethod(withSignal, method, thisArg, args);
}

/** @internal The rest of `acquire()`, past the guard. */
export function passAcquire<T>(b: RoutedBreaker): CallPermit<T> {
  if (b.underFamilyGate()) {
    const call = familyCall<T>(b, undefined);
    if (!isCall(call)) throw call;
    return call;
  }
  const token = b.admitOwn();
  if (token instanceof FaultedAdmission) return faulted<T>(b, token);
  if (typeof token !== 'number') throw token;
  if (token === UNCOUNTED) return new UncountedCall<T>(undefined);
  return new TrackedCall<T>(b, token, b.timed ? b.monotonic() : NOT_TIMED);
}

/**
 * @internal `pass()` holding a bulkhead slot: `leave` gives it back when
 * the call settles, told by the call object itself (or, on the plain path,
 * by the one async function), so that a slot costs no promise of its own.
 */
export function passHolding<T>(
  b: RoutedBreaker,
  fn: ProtectedCall<T>,
  signal: AbortSignal | undefined,
  leave: () => void,
): Promise<T> {
  const call = holdingCall<T>(b, signal, leave);
  if (typeof call === 'number') return runHolding(b, fn, call, leave);
  return call instanceof Promise ? call : call.run(fn, signal);
}

/** @internal `passMethod()` holding a bulkhead slot. */
export function passMethodHolding<T>(
  b: RoutedBreaker,
  method: Method<T>,
  thisArg: unknown,
  args: unknown[],
  withSignal: WithSignal<T>,
  leave: () => void,
): Promise<T> {
  const call = holdingCall<T>(b, undefined, leave);
  if (typeof call === 'number')
    return runHolding(b, () => method.apply(thisArg, args), call, leave);
  return call instanceof Promise ? call : call.runMethod(withSignal, method, thisArg, args);
}

/**
 * The admission of a call holding a slot: a plain-path token, a call object
 * that gives the slot back when it settles, or the rejection (slot given back).
 */
function holdingCall<T>(
  b: RoutedBreaker,
  signal: AbortSignal | undefined,
  leave: () => void,
): number | TrackedCall<T> | FaultedCall<T> | UncountedCall<T> | Promise<never> {
  let call: TrackedCall<T> | FaultedCall<T> | UncountedCall<T> | CircuitOpenError;
  if (b.underFamilyGate()) call = familyCall<T>(b, signal);
  else {
    const token = b.admitOwn();
    if (token instanceof FaultedAdmission) call = faulted<T>(b, token);
    else if (typeof token !== 'number') call = token;
    else if (token >= 0 && signal === undefined && b.config.timeoutMs === undefined) return token;
    else if (token === UNCOUNTED) call = new UncountedCall<T>(signal);
    else call = new TrackedCall<T>(b, token, b.timed ? b.monotonic() : NOT_TIMED);
  }
  if (!isCall(call)) {
    leave();
    return deferredRejection(call);
  }
  // A call let through uncounted (forced disabled) holds no slot: it is not the breaker's to cap.
  if (call instanceof UncountedCall) leave();
  else call.onSettled = leave;
  return call;
}

/** `runPlain()` that gives the slot back before the call is counted. */
async function runHolding<T>(
  b: RoutedBreaker,
  fn: ProtectedCall<T>,
  token: number,
  leave: () => void,
): Promise<T> {
  const startedAt = b.timed ? b.monotonic() : NOT_TIMED;
  const config = b.config;
  let value: T;
  try {
    value = await fn(NO_SIGNAL);
  } catch (error) {
    leave();
    b.settle(token, b.classifyError(error, config), error, startedAt, undefined, config);
    throw error;
  }
  leave();
  b.settleValue(token, value, startedAt, config);
  return value;
}

/**
 * A child's call while its family is not closed: the family rejects for every
 * key while open, and while half-open admits its probes through whichever key
 * is asked for. A family probe's call carries the family's permit with it
 * (settled alike); a child's own rejection returns that permit.
 */
function familyCall<T>(
  b: RoutedBreaker,
  signal: AbortSignal | undefined,
): TrackedCall<T> | FaultedCall<T> | UncountedCall<T> | CircuitOpenError {
  const parent = b.parent!;
  const gate = parent.admitAsFamily();
  if (typeof gate !== 'number') return gate;
  const admission = b.admitOwn();
  const token = admission instanceof FaultedAdmission ? admission.token : admission;
  // A family probe learns nothing from a call that is not recorded: its permit goes back too.
  if (typeof token !== 'number' || token === UNCOUNTED) {
    if (gate < 0) parent.settle(gate, 'ignored', undefined, NOT_TIMED, undefined);
    return typeof token !== 'number' ? token : new UncountedCall<T>(signal);
  }
  const startedAt = b.timed ? b.monotonic() : NOT_TIMED;
  const call =
    admission instanceof FaultedAdmission
      ? new FaultedCall<T>(b, token, startedAt, admission.plan)
      : new TrackedCall<T>(b, token, startedAt);
  if (gate !== 0) call.parentCall = new TrackedCall<T>(parent, gate, startedAt);
  return call;
}

/** A call admitted with an injected fault. */
function faulted<T>(b: RoutedBreaker, admission: FaultedAdmission): FaultedCall<T> {
  const startedAt = b.timed ? b.monotonic() : NOT_TIMED;
  return new FaultedCall<T>(b, admission.token, startedAt, admission.plan);
}
