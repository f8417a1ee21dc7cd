import { Logger } from '@nestjs/common';
import type { Breaker } from '../core/index.js';
import { circuitBreakerMessages } from '../circuit-breaker.messages.js';
import type { LastGoodFallback } from '../interfaces/circuit-breaker-method-options.interface.js';
import { LastGoodCache } from './last-good-cache.js';

/**
 * The `{ lastGood }` fallback of one decorated method: remembers each good
 * answer by its arguments' key, one cache per application (an application is
 * identified by its registry, the `scope`), and finds a fresh one for a call
 * that failed.
 *
 * @internal
 */
export class LastGood {
  private readonly caches = new WeakMap<object, LastGoodCache>();
  private warnedAboutKeys = false;

  constructor(
    private readonly options: LastGoodFallback['lastGood'],
    /** `Class.method`, for the warning about arguments it cannot key. */
    private readonly qualifiedName: string,
  ) {}

  /** Remembers `value` as the good answer of the call with `args`, at the breaker's time. */
  remember(scope: object, breaker: Breaker, args: unknown[], value: unknown): void {
    const key = this.keyOf(args);
    if (key !== undefined) this.cacheOf(scope).store(key, value, breaker.monotonic());
  }

  /** The good answer of a call with `args`, if one is fresh. */
  lookup(scope: object, breaker: Breaker, args: unknown[]): { value: unknown } | undefined {
    const key = this.keyOf(args);
    return key === undefined ? undefined : this.caches.get(scope)?.lookup(key, breaker.monotonic());
  }

  private cacheOf(scope: object): LastGoodCache {
    let cache = this.caches.get(scope);
    if (cache === undefined) {
      cache = new LastGoodCache(this.options.maxAgeMs, this.options.maxEntries ?? 100);
      this.caches.set(scope, cache);
    }
    return cache;
  }

  /**
   * The cache key of a call's arguments, or `undefined` when there is none
   * (arguments JSON cannot hold, such as a request object): the call is then
   * served and counted as usual, only not cached, and that is said once.
   */
  private keyOf(args: unknown[]): string | undefined {
    try {
      return this.options.key !== undefined ? this.options.key(...args) : JSON.stringify(args);
    } catch (error) {
      if (!this.warnedAboutKeys) {
        this.warnedAboutKeys = true;
        new Logger('CircuitBreaker').warn(
          circuitBreakerMessages.uncacheableArguments(this.qualifiedName, error),
        );
      }
      return undefined;
    }
  }
}
