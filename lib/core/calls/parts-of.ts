import { partsFor, type PartsHost } from './breaker-parts.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import { RareState } from '../state/rare-state.js';

/**
 * @internal Gives `b` the parts its options ask for (made once, kept across
 * reconfigurations while they ask for any), in its rare state: a breaker
 * without a bulkhead, a slow start or a health check (a breaker per target)
 * holds nothing for them.
 */
export function refitParts(
  b: PartsHost & { rare: RareState | undefined },
  config: ResolvedBreakerOptions,
): void {
  const current = b.rare?.parts;
  const parts = partsFor(config, current, b);
  if (parts === current) return;
  if (parts !== undefined) (b.rare ??= new RareState()).parts = parts;
  else b.rare!.parts = undefined;
}
