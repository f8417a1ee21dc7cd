import type { BreakerOptions } from './breaker-options.js';
import { BreakerConfigError } from '../errors/breaker.errors.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import { resolveBreakerOptions, type ResolvedBreakerOptions } from './resolve-options.js';

/** Options that decide how a breaker is built (a family or not) and shared: fixed for its lifetime. */
const FIXED = ['perKey', 'share'] as const;

/**
 * The options `reconfigure()` would put in force, checked exactly as the
 * constructor checks them, and refused when they change what cannot change.
 *
 * @internal
 */
export function reconfigured(
  name: string,
  previous: ResolvedBreakerOptions,
  options: BreakerOptions,
): ResolvedBreakerOptions {
  const current = resolveBreakerOptions(name, options);
  for (const option of FIXED) {
    // Plain data (numbers, booleans, nested objects of them): comparing their JSON is comparing them.
    if (JSON.stringify(current[option]) !== JSON.stringify(previous[option])) {
      throw new BreakerConfigError(breakerMessages.reconfigureFixed(name, option), name, option);
    }
  }
  return current;
}
