import { guardFor, type CallGuard, type GuardHost } from './call-guard.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';

// Kept beside the breaker, not in a field of its own: a breaker without a
// bulkhead, a slow start or a recovery probe (a breaker per target) holds
// nothing for them, and its calls read one flag of its shared config.
const guards = new WeakMap<object, CallGuard>();

/**
 * @internal Only with the bulkhead, rampUp or probe option: the bulkhead, the
 * ramp and the probe `b` keeps (see `CallGuard`).
 */
export function guardOf(b: { readonly config: ResolvedBreakerOptions }): CallGuard | undefined {
  return b.config.guarded ? guards.get(b) : undefined;
}

/** @internal The guard `b` holds, whatever its options say now (a family asks as it evicts). */
export function heldGuard(b: object): CallGuard | undefined {
  return guards.get(b);
}

/** @internal Gives `b` the guard its options ask for (made once, kept across reconfigurations while they ask for one). */
export function reguard(b: GuardHost, config: ResolvedBreakerOptions): void {
  const current = guards.get(b);
  const guard = guardFor(config, current, b);
  if (guard === undefined) guards.delete(b);
  else if (guard !== current) guards.set(b, guard);
}
