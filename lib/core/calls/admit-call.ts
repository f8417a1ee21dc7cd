import { NOT_TIMED, UNCOUNTED } from './call-tokens.js';
import { MAY_BE_PLAIN, type PipelineBreaker, type Ticket } from './call-pipeline.js';
import { TrackedCall } from './tracked-call.js';
import { UncountedCall } from './uncounted-call.js';

/**
 * The innermost step of every pipeline: the state's admission, and what the
 * admitted call runs in. A call that may be plain, with no deadline (`timeoutMs:
 * false`), no caller signal and no probe, gets its token alone: no call object,
 * no promise of its own. @internal
 */
export function admitCall<T>(
  b: PipelineBreaker,
  signal: AbortSignal | undefined,
  flags: number,
): Ticket<T> {
  const token = b.admitOwn();
  return typeof token === 'number' ? callFor<T>(b, token, signal, flags) : token;
}

/** What a call admitted with `token` runs in: the plain path's token, a tracked call, or an uncounted one. @internal */
export function callFor<T>(
  b: PipelineBreaker,
  token: number,
  signal: AbortSignal | undefined,
  flags: number,
): number | TrackedCall<T> | UncountedCall<T> {
  if (token >= 0) {
    if ((flags & MAY_BE_PLAIN) !== 0 && signal === undefined && b.config.timeoutMs === undefined)
      return token;
    // Negative, so the plain path never needs to look for it.
  } else if (token === UNCOUNTED) return new UncountedCall<T>(signal);
  return new TrackedCall<T>(b, token, b.timed ? b.monotonic() : NOT_TIMED);
}
