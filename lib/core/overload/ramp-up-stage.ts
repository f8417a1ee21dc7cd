import type { Admission, Admit, PipelineBreaker, Stage } from '../calls/call-pipeline.js';

/**
 * The slow start after a recovery (`rampUp`): while it lasts, a growing share
 * of calls goes on, the rest is refused (`ramp-up`). @internal
 */
export const rampUpStage: Stage = (next: Admit): Admit =>
  function rampUp<T>(
    b: PipelineBreaker,
    signal: AbortSignal | undefined,
    flags: number,
  ): Admission<T> {
    const parts = b.rare?.parts;
    const ramp = parts?.ramp;
    if (ramp === undefined) return next<T>(b, signal, flags);
    const now = b.monotonic();
    if (ramp.ended(now)) {
      parts!.ramp = undefined;
      return next<T>(b, signal, flags);
    }
    return ramp.admit(now) ? next<T>(b, signal, flags) : b.reject('ramp-up', ramp.retryAfter(now));
  };
