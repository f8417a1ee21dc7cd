import { NOT_TIMED } from './call-tokens.js';
import type { CallContext, CallOwner, ProtectedCall } from './tracked-call.js';

// Shared by every call that has neither a caller signal nor a deadline.
const NO_SIGNAL: CallContext = Object.freeze({ signal: undefined });

type Method<T> = (...args: any[]) => T | PromiseLike<T>;

/** What the plain path reads of its breaker. @internal */
export interface PlainRunner extends CallOwner {
  readonly timed: boolean;
  monotonic(): number;
}

/**
 * The plain path: no deadline, no caller signal, no probe; no call object, no
 * promise of our own. (A call holding a bulkhead slot has its own copy, in
 * `held-call.ts`: an optional parameter here cost the closed path about 8 %,
 * measured against the build before it.) @internal
 */
export async function runPlain<T>(b: PlainRunner, fn: ProtectedCall<T>, token: number): Promise<T> {
  const startedAt = b.timed ? b.monotonic() : NOT_TIMED;
  // Judged by the options it started under, whatever reconfigure() puts in force meanwhile.
  const config = b.config;
  let value: T;
  try {
    value = await fn(NO_SIGNAL);
  } catch (error) {
    b.settle(token, b.classifyError(error, config), error, startedAt, undefined, config);
    throw error;
  }
  b.settleValue(token, value, startedAt, config);
  return value;
}

/** `runPlain()` for a decorated method, without a closure per call. @internal */
export async function runMethodPlain<T>(
  b: PlainRunner,
  method: Method<T>,
  thisArg: unknown,
  args: unknown[],
  token: number,
): Promise<T> {
  const startedAt = b.timed ? b.monotonic() : NOT_TIMED;
  const config = b.config;
  let value: T;
  try {
    value = await method.apply(thisArg, args);
  } catch (error) {
    b.settle(token, b.classifyError(error, config), error, startedAt, undefined, config);
    throw error;
  }
  b.settleValue(token, value, startedAt, config);
  return value;
}
