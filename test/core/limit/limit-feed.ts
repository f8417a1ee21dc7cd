/** Feeding a limit algorithm whole windows of samples on a manual timeline, for the algorithm specs. */
import {
  LIMIT_DEFAULTS,
  type ResolvedLimitOptions,
} from '../../../lib/core/limit/limit-options.js';
import type { LimitAlgorithm } from '../../../lib/core/limit/limit-algorithm.js';

export function limitOptions(given: Partial<ResolvedLimitOptions> = {}): ResolvedLimitOptions {
  return { ...LIMIT_DEFAULTS, ...given };
}

/**
 * A timeline of requests ending every `spacingMs`: `window()` ends `rtts.length`
 * of them, each with `inFlight` places held when it started.
 */
export class Feed {
  now = 0;

  constructor(
    readonly algorithm: LimitAlgorithm,
    private readonly spacingMs = 50,
  ) {}

  /** Requests ending one after another (`inFlight`: for all, or for each), then the limit. */
  window(rtts: readonly number[], inFlight: number | readonly number[], dropped = -1): number {
    rtts.forEach((rtt, i) => {
      const held = typeof inFlight === 'number' ? inFlight : inFlight[i]!;
      this.algorithm.sample(this.now - rtt, rtt, held, i === dropped);
      this.now += this.spacingMs;
    });
    return this.algorithm.limit;
  }

  /** `count` windows from `rttsOf(limit, index)`, every request finding the limit full; the limits after each. */
  saturated(count: number, rttsOf: (limit: number, index: number) => readonly number[]): number[] {
    const limits: number[] = [];
    for (let i = 0; i < count; i++)
      limits.push(this.window(rttsOf(this.algorithm.limit, i), this.algorithm.limit));
    return limits;
  }
}

/** `n` copies of `ms`. */
export const flat = (ms: number, n = 21): number[] => Array.from({ length: n }, () => ms);

/**
 * Lognormal factors of mean 1 and sigma 1 (Netflix's Example.java: lognormal(3, 1) scaled to a mean), from a
 * seeded generator (mulberry32, Box-Muller).
 */
export function lognormalNoise(seed: number): () => number {
  let a = seed;
  const next = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => {
    const u = 1 - next();
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
    return Math.exp(z - 0.5);
  };
}

/** Latency of a server of `capacity` places, `baseMs` each, when `limit` requests are in flight (a queue beyond). */
export const queued = (baseMs: number, capacity: number, limit: number): number =>
  baseMs * Math.max(1, limit / capacity);

export const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
