import type { LimitAlgorithm } from './limit-algorithm.js';
import type { ResolvedLimitOptions } from './limit-options.js';

/** The share of the limit kept on an overload sign. */
const BACKOFF = 0.9;

/**
 * Additive increase, multiplicative decrease: one more place for a request
 * that ended well while the limit was in use, a tenth less for an overload
 * sign. It hears overload only from drops (timeouts, refusals downstream),
 * not from latency. @internal
 */
export class AimdLimit implements LimitAlgorithm {
  limit: number;

  constructor(private readonly options: ResolvedLimitOptions) {
    this.limit = options.initialLimit;
  }

  sample(_startedAt: number, _rttMs: number, inFlight: number, dropped: boolean): void {
    if (dropped) this.limit = Math.max(this.options.minLimit, Math.floor(this.limit * BACKOFF));
    // A limit that is not used says nothing of the service: it does not grow.
    else if (inFlight * 2 >= this.limit)
      this.limit = Math.min(this.options.maxLimit, this.limit + 1);
  }
}
