import { BreakerHookError } from '../errors/breaker.errors.js';
import { breakerMessages } from '../errors/breaker.messages.js';

/**
 * What a faulty draw counts as: the middle of [0, 1). Jitter then changes
 * nothing, and a share (shedding, a fault's rate) is judged at one half.
 *
 * @internal
 */
export const SAFE_DRAW = 0.5;

/**
 * One number from a random source the application gave (`deps.random`,
 * `injectFault({ random })`), never trusted: a draw that throws, or that is
 * not a number in [0, 1), is a fault of that source. It is returned as the
 * error to report (the caller reports it once and uses `SAFE_DRAW`), so that
 * nothing drawn escapes into a call already admitted, and no open duration
 * becomes NaN or infinite.
 *
 * @internal
 */
export function drawFrom(
  random: () => number,
  breaker: string,
  source: string,
): number | BreakerHookError {
  let drawn: unknown;
  try {
    drawn = random();
  } catch (fault) {
    return new BreakerHookError(breakerMessages.randomThrew(breaker, source, fault), fault);
  }
  if (typeof drawn === 'number' && drawn >= 0 && drawn < 1) return drawn;
  return new BreakerHookError(breakerMessages.randomAnswered(breaker, source, drawn), undefined);
}
