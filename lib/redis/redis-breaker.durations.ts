import type { ResolvedBreakerOptions } from '../core/index.js';
import { PERMIT_MARGIN_MS, PERMIT_RETRY_MIN_MS } from './redis-breaker.constants.js';

/**
 * How long a won permit lasts: the whole half-open period, that is every probe
 * of the budget run in turn, each within its deadline. It expires in Redis
 * after that, so a holder that dies mid-probe blocks the fleet no longer.
 *
 * @internal
 */
export function permitTtlMs(config: ResolvedBreakerOptions): number {
  return Math.ceil(
    config.probeMaxWaitMs * Math.ceil(config.maxProbes / config.maxConcurrentProbes),
  );
}

/**
 * How much earlier than Redis a won permit ends locally: `PERMIT_MARGIN_MS`,
 * at most a quarter of the permit.
 *
 * @internal
 */
export function permitMarginMs(ttlMs: number): number {
  return Math.min(PERMIT_MARGIN_MS, Math.floor(ttlMs / 4));
}

/**
 * The longest open period this breaker could have chosen itself: an adopted
 * open-until further away than this comes from a replica whose clock is off,
 * and is cut to it.
 *
 * @internal
 */
export function longestOpenMs(config: ResolvedBreakerOptions): number {
  const base = config.backoffMultiplier === 1 ? config.openDurationMs : config.backoffMaxMs;
  return Math.max(base * (1 + config.jitter), config.maxRetryAfterMs);
}

/**
 * How long this replica waits on a permit another replica holds (`ttlMs` left
 * on it, as Redis answered) before it asks again: at most the breaker's own
 * `halfOpen.maxWaitMs`, so that a permit Redis holds far longer than a
 * replica ever writes one (a hand edit, a restore) keeps no replica waiting
 * once it is gone; and at least `PERMIT_RETRY_MIN_MS`, so that a permit about
 * to expire (or a nonsense answer) never makes it ask in a loop.
 *
 * @internal
 */
export function permitWaitMs(config: ResolvedBreakerOptions, ttlMs: number): number {
  const bound = Math.max(PERMIT_RETRY_MIN_MS, config.probeMaxWaitMs);
  return ttlMs > PERMIT_RETRY_MIN_MS ? Math.min(ttlMs, bound) : PERMIT_RETRY_MIN_MS;
}
