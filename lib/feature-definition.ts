import type { BreakerOptions } from './core/index.js';
import type { LimiterDefinition } from './concurrency-limit.options.js';

/**
 * The breaker options one `CircuitBreakerModule.forFeature({ ... })` call
 * gives (or the limiters one `forFeatureLimiters({ ... })` call defines),
 * provided as a value so that the registry can read every one of them
 * before any provider asks for a breaker by name.
 *
 * @internal
 */
export class FeatureDefinition {
  constructor(
    readonly breakers: ReadonlyArray<readonly [string, BreakerOptions]>,
    readonly limiters: readonly LimiterDefinition[] = [],
  ) {}
}
