import type { BreakerOptions } from './breaker-options.js';
import {
  breakerOptionChecker,
  resolveBreakerOptions,
  resolveCopied,
  type BreakerOptionsSource,
  type ResolvedBreakerOptions,
} from './resolve-options.js';

// Breakers built from the same options (or from none, or from an object
// that says what the one before said) share one validated, frozen config:
// with a breaker per target, the config would otherwise be the largest part
// of each. The options object is remembered as it was (the plain
// copy its resolution made), so a caller that changes it between two breakers
// still gets what it asked for.
//
// An options object enters the WeakMap only when it is seen a second time:
// most are literals used once, and a WeakMap entry for each would cost more
// than resolving them (a weak entry is work for the garbage collector while
// its key lives, and more when the key dies young). The last few seen are
// held strongly until newer ones push them out, so that objects used in turn
// (a read and a write options object, breaker after breaker) are still found:
// each is a small plain object, and its config, which its breakers hold anyway.
const DEFAULT_CONFIG = resolveBreakerOptions('(defaults)', undefined);

interface Resolution {
  readonly options: BreakerOptions;
  readonly copy: BreakerOptions;
  readonly config: ResolvedBreakerOptions;
}
const cache = new WeakMap<BreakerOptions, Resolution>();
const RECENT = 8;
const recent: (Resolution | undefined)[] = Array.from({ length: RECENT });
let next = 0;

/** @internal */
export function configFor(
  name: string,
  options: BreakerOptions | undefined,
): ResolvedBreakerOptions {
  if (options === undefined) return DEFAULT_CONFIG;
  if (typeof options === 'object' && options !== null) {
    const cached = cache.get(options);
    if (cached !== undefined && sameOptions(cached.copy, options)) return cached.config;
    for (const seen of recent) {
      if (seen?.options !== options) continue;
      if (!sameOptions(seen.copy, options)) break;
      cache.set(options, seen);
      return seen.config;
    }
    // A new object that says what the last one said (a literal written once, in a loop or a factory).
    const latest = recent[(next + RECENT - 1) % RECENT];
    if (latest !== undefined && sameOptions(latest.copy, options)) return latest.config;
  }
  const { copy, config } = resolveCopied(breakerOptionChecker(name), options);
  recent[next] = { options, copy, config };
  next = (next + 1) % RECENT;
  return config;
}

/**
 * Resolves `options` as `configFor()` does, its errors worded by `source`
 * (where the options were written), and keeps the config for the breakers
 * later built from this very object: `configFor(name, options)` then answers
 * it without resolving again, while the object still says what it said. For
 * a layer that checks a breaker's options before it builds the breaker (the
 * Nest module at start-up). @internal
 */
export function resolveForBreaker(
  name: string,
  options: BreakerOptions,
  source?: BreakerOptionsSource,
): ResolvedBreakerOptions {
  const { copy, config } = resolveCopied(breakerOptionChecker(name, source), options);
  cache.set(options, { options, copy, config });
  return config;
}

/** Whether `now` holds what `seen` (a plain copy, without `undefined` values) held, one level of objects deep. */
function sameOptions(seen: BreakerOptions, now: BreakerOptions): boolean {
  try {
    return (
      isPlainRecord(now) &&
      sameRecord(seen as Record<string, unknown>, now as Record<string, unknown>, true)
    );
  } catch {
    // A getter or a Proxy trap that throws now: resolving again reports it, naming the option.
    return false;
  }
}

function sameRecord(
  seen: Record<string, unknown>,
  now: Record<string, unknown>,
  deep: boolean,
): boolean {
  let given = 0;
  for (const key in now) {
    if (!Object.hasOwn(now, key)) return false;
    const y = now[key];
    if (y === undefined) continue;
    given++;
    const x = seen[key];
    if (Object.is(x, y)) continue;
    if (!deep || !isPlainRecord(x) || !isPlainRecord(y) || !sameRecord(x, y, false)) return false;
  }
  // A symbol key is never the same: resolving again refuses it.
  return given === countKeys(seen) && Object.getOwnPropertySymbols(now).length === 0;
}

function countKeys(record: Record<string, unknown>): number {
  let count = 0;
  for (const key in record) if (Object.hasOwn(record, key)) count++;
  return count;
}

/** An object literal, as the options' checks want them: anything else is resolved again, and refused there. */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
