import type { ResolvedBreakerOptions } from '../options/resolve-options.js';

/** The open duration after `reopens` reopenings in a row, before jitter: exponential backoff, capped. @internal */
export function baseOpenDuration(config: ResolvedBreakerOptions, reopens: number): number {
  return Math.min(config.openDurationMs * config.backoffMultiplier ** reopens, config.backoffMaxMs);
}

/**
 * How long the breaker stays open this time: backoff, then jitter (so that
 * replicas and keys opened together do not all probe at once), then at least
 * the dependency's `Retry-After`, capped by `maxRetryAfterMs`.
 *
 * @internal
 */
export function openDuration(
  config: ResolvedBreakerOptions,
  reopens: number,
  source: { draw(): number },
  retryAfterHint: number | undefined,
): number {
  let duration = baseOpenDuration(config, reopens);
  // Whole milliseconds: open-until times and Retry-After estimates stay readable.
  if (config.jitter !== 0)
    duration = Math.round(duration * (1 - config.jitter + 2 * config.jitter * source.draw()));
  if (retryAfterHint !== undefined)
    duration = Math.max(duration, Math.min(retryAfterHint, config.maxRetryAfterMs));
  return duration;
}
