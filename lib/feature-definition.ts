import type { BreakerOptions } from './core/index.js';

/**
 * The breaker options one `CircuitBreakerModule.forFeature({ ... })` call
 * gives, provided as a value so that the registry can read every one of them
 * before any provider asks for a breaker by name.
 *
 * @internal
 */
export class FeatureDefinition {
  constructor(readonly breakers: ReadonlyArray<readonly [string, BreakerOptions]>) {}
}
