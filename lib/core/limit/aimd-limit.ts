import type { LimitAlgorithm } from './limit-algorithm.js';
import type { ResolvedLimitOptions } from './limit-options.js';

// Each drop takes a tenth off the limit, as TCP Reno takes half: a gentler cut
// suits a limit that is a count of requests, not of packets.
const BACKOFF = 0.9;

/**
 * Additive increase, multiplicative decrease: the limit grows by one each time
 * a full limit's worth of requests has ended well while the limit was in use
 * (at least half of it in flight: a limit nobody reaches proves nothing), and
 * shrinks by a tenth on a dropped request. One overload event is one cut: the
 * drops of requests that started before the last cut (the same burst of
 * timeouts) do not cut again, so a burst cannot take the limit to its floor.
 *
 * It reads no latency: its signal is `drop()` (timeouts, refusals for overload
 * downstream). The gradient limit is the one that follows latency.
 *
 * @internal
 */
export class AimdLimit implements LimitAlgorithm {
  private current: number;
  /** Good samples since the limit last grew. */
  private good = 0;
  private lastCutAt = -Infinity;

  constructor(private readonly options: ResolvedLimitOptions) {
    this.current = options.initialLimit;
  }

  get limit(): number {
    return this.current;
  }

  sample(startedAt: number, rttMs: number, inFlight: number, dropped: boolean): void {
    if (dropped) {
      if (startedAt < this.lastCutAt) return;
      this.lastCutAt = startedAt + Math.max(0, rttMs);
      this.good = 0;
      this.current = Math.max(this.options.minLimit, Math.floor(this.current * BACKOFF));
    } else if (inFlight * 2 >= this.current && ++this.good >= this.current) {
      this.good = 0;
      this.current = Math.min(this.options.maxLimit, this.current + 1);
    }
  }
}
