import type { BreakerOptions } from './breaker-options.js';
import { resolveBreakerOptions, type ResolvedBreakerOptions } from './resolve-options.js';

// Breakers built from the same options (or from none) share one validated,
// frozen config: with a breaker per target, the config would otherwise be the
// largest part of each. The options object is remembered as it was, so a
// caller that changes it between two breakers still gets what it asked for.
const DEFAULT_CONFIG = resolveBreakerOptions('(defaults)', undefined);
const cache = new WeakMap<
  BreakerOptions,
  { seen: BreakerOptions; config: ResolvedBreakerOptions }
>();

/** @internal */
export function configFor(
  name: string,
  options: BreakerOptions | undefined,
): ResolvedBreakerOptions {
  if (options === undefined) return DEFAULT_CONFIG;
  const cached = typeof options === 'object' && options !== null ? cache.get(options) : undefined;
  if (cached !== undefined && sameOptions(cached.seen, options)) return cached.config;
  const config = resolveBreakerOptions(name, options);
  cache.set(options, { seen: copyOptions(options), config });
  return config;
}

function copyOptions(options: BreakerOptions): BreakerOptions {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options))
    copy[key] = isPlainObject(value) ? { ...value } : value;
  return copy as BreakerOptions;
}

function sameOptions(seen: BreakerOptions, now: BreakerOptions): boolean {
  const a = seen as Record<string, unknown>;
  const b = now as Record<string, unknown>;
  const keys = Object.keys(b);
  if (keys.length !== Object.keys(a).length) return false;
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (isPlainObject(y)) {
      if (!isPlainObject(x) || !sameShallow(x, y)) return false;
    } else if (x !== y) return false;
  }
  return true;
}

function sameShallow(x: Record<string, unknown>, y: Record<string, unknown>): boolean {
  const keys = Object.keys(y);
  return keys.length === Object.keys(x).length && keys.every((key) => x[key] === y[key]);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
