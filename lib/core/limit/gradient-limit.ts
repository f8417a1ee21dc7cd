import type { LimitAlgorithm } from './limit-algorithm.js';
import type { ResolvedLimitOptions } from './limit-options.js';

// Latency is read in windows of at least this many samples and this long: one
// sample of a lognormal latency says little (its p99 is ten times its median).
const WINDOW_MIN_SAMPLES = 20;
const WINDOW_MIN_MS = 1_000;
// The baseline is the lowest window of the current and the previous span of
// this many windows.
const SPAN_WINDOWS = 20;
// How many standard errors a window's mean is moved before it is compared: as
// a baseline candidate, up (the lowest of 20 to 40 windows is that much below
// their mean by noise alone); as a sign of queueing, down (noise alone must
// seldom cut the limit).
const BASELINE_Z = 2;
const QUEUE_Z = 0.5;
// Noise alone still reads about a third of the windows at the no-load latency
// as slower than it; those move the limit, but only a window slower by this
// many standard errors (queueing beyond its noise) makes growth start again
// from its smallest step: growth is not held back by noise.
const RESTART_Z = 2;
// A window without queueing adds HEADROOM * sqrt(limit), then twice the last
// addition until one queues beyond its noise, at most MAX_PROBE of the limit at once.
const HEADROOM = 0.05;
const MAX_PROBE = 0.5;
// A window with queueing moves the limit SMOOTHING of the way to
// limit * gradient + headroom, the gradient never below MIN_GRADIENT: one
// window at most takes a quarter off.
const MIN_GRADIENT = 0.5;
const SMOOTHING = 0.5;
// A window with a dropped request takes a tenth off, once.
const DROP_BACKOFF = 0.9;
// Latencies are read as logarithms, within these bounds (ms): 0 and a huge value stay finite.
const MIN_RTT_MS = 0.001;
const MAX_RTT_MS = 1e9;

/**
 * A limit that follows latency. Samples are read in windows (see the
 * constants); each window compares its latency (a geometric mean: a heavy
 * tail does not drag it about) with the no-load latency, the baseline. Slower
 * by more than its noise: the limit scales towards limit * baseline / latency
 * (the gradient). Not slower: the limit grows, by a small step that doubles
 * until a window queues beyond its noise. The integer limit is the estimate
 * rounded down.
 *
 * The failure modes of the published gradient limits, and what avoids them:
 * - Creeping up under mild overload (Netflix/concurrency-limits#134): there the
 *   baseline is an average of loaded latencies, the gradient reaches 1 and the
 *   headroom adds up for ever. Here the baseline is the lowest window of the
 *   last 20 to 40, and a higher one replaces a lower one only if it was
 *   measured at no more requests in flight (on average over its window):
 *   latency that rose because the limit rose never becomes the baseline.
 * - A drifting baseline (#165, #37): no single sample sets it, windows do,
 *   each at the upper bound of its mean. A real rise (a deploy that makes every
 *   request slower) is learned once the old baseline has left both spans and
 *   the limit has come down to the in-flight count it was measured at: the
 *   limit dips meanwhile (on a saturated server, to its floor for about 20
 *   windows), then climbs back.
 * - Dips while the minimum is re-measured (Envoy #9007, #11579): nothing
 *   forces the limit down to measure; the baseline comes from the traffic.
 * - Collapse after a pause: a stall makes one or two windows slow; no window
 *   takes more than a quarter off, and the stall's window is never a baseline.
 * - Growth while the limit is not used: a window whose in-flight peak stayed
 *   below half the limit never raises it (Netflix's app-limited rule).
 * - Stuck low after a cut: at the no-load latency about a third of the windows
 *   read slower by noise; had each restarted growth from its smallest step
 *   (2% of a limit of 4), those cuts would cancel it, and a limit cut by an
 *   incident would stay there after the service recovered (20 s in the retry
 *   storm of bench/LIMIT-RESULTS.md, section 4). Only a window slower beyond
 *   its noise (RESTART_Z) restarts growth.
 *
 * O(1) state and work per sample; no timer: windows close on samples.
 *
 * @internal
 */
export class GradientLimit implements LimitAlgorithm {
  private current: number;
  private estimate: number;
  /** The no-load latency, as a logarithm of ms; NaN before the first window. */
  private baseline = Number.NaN;
  /** The mean in-flight count of the window the baseline came from. */
  private baselineInFlight = 0;
  private spanMin = Infinity;
  private spanInFlight = 0;
  private previousSpanMin = Infinity;
  private previousSpanInFlight = 0;
  private spanWindows = 0;
  /** What the next window without queueing adds: doubles while none queues. */
  private probe = 0;
  // The open window.
  private windowStart = 0;
  private count = 0;
  private sum = 0;
  private sumSquares = 0;
  private maxInFlight = 0;
  private sumInFlight = 0;
  private dropped = false;

  constructor(private readonly options: ResolvedLimitOptions) {
    this.estimate = options.initialLimit;
    this.current = options.initialLimit;
    this.set(options.initialLimit);
  }

  get limit(): number {
    return this.current;
  }

  /** The no-load latency it compares with (ms); NaN before its first window. */
  get baselineMs(): number {
    return Math.exp(this.baseline);
  }

  sample(startedAt: number, rttMs: number, inFlight: number, dropped: boolean): void {
    if (!(rttMs >= 0)) return;
    const rtt = Math.min(MAX_RTT_MS, Math.max(MIN_RTT_MS, rttMs));
    const end = startedAt + rtt;
    if (this.count === 0) this.windowStart = end;
    const x = Math.log(rtt);
    this.count++;
    this.sum += x;
    this.sumSquares += x * x;
    if (inFlight > this.maxInFlight) this.maxInFlight = inFlight;
    this.sumInFlight += inFlight;
    if (dropped) this.dropped = true;
    if (this.count >= WINDOW_MIN_SAMPLES && end - this.windowStart >= WINDOW_MIN_MS)
      this.closeWindow();
  }

  private closeWindow(): void {
    const n = this.count;
    const mean = this.sum / n;
    const standardError = Math.sqrt(Math.max(0, this.sumSquares / n - mean * mean) / n);
    if (!Number.isNaN(this.baseline)) this.adjust(mean, standardError);
    this.learnBaseline(mean + BASELINE_Z * standardError, this.sumInFlight / n);
    this.count = 0;
    this.sum = 0;
    this.sumSquares = 0;
    this.maxInFlight = 0;
    this.sumInFlight = 0;
    this.dropped = false;
  }

  /** One window's step, from its mean latency (a logarithm) and the mean's standard error. */
  private adjust(mean: number, standardError: number): void {
    const estimate = this.estimate;
    if (this.dropped) {
      this.probe = 0;
      return this.set(estimate * DROP_BACKOFF);
    }
    const latency = mean - QUEUE_Z * standardError;
    const gradient = Math.max(MIN_GRADIENT, Math.min(1, Math.exp(this.baseline - latency)));
    if (gradient < 1) {
      if (mean - RESTART_Z * standardError > this.baseline) this.probe = 0;
      const target = estimate * gradient + HEADROOM * Math.sqrt(estimate);
      return this.set(estimate + (target - estimate) * SMOOTHING);
    }
    if (this.maxInFlight * 2 < this.current) return;
    const step = HEADROOM * Math.sqrt(estimate);
    this.probe = this.probe === 0 ? step : Math.min(this.probe * 2, estimate * MAX_PROBE);
    this.set(estimate + this.probe);
  }

  /** A window's upper bound (a logarithm) and mean in-flight count: the baseline falls at once, rises as above. */
  private learnBaseline(candidate: number, inFlight: number): void {
    if (candidate < this.spanMin) {
      this.spanMin = candidate;
      this.spanInFlight = inFlight;
    }
    if (++this.spanWindows >= SPAN_WINDOWS) {
      this.previousSpanMin = this.spanMin;
      this.previousSpanInFlight = this.spanInFlight;
      this.spanMin = Infinity;
      this.spanWindows = 0;
    }
    const current = this.spanMin <= this.previousSpanMin;
    const lowest = current ? this.spanMin : this.previousSpanMin;
    const at = current ? this.spanInFlight : this.previousSpanInFlight;
    if (lowest > this.baseline && at > this.baselineInFlight) return;
    this.baseline = lowest;
    this.baselineInFlight = at;
  }

  private set(estimate: number): void {
    const { minLimit, maxLimit } = this.options;
    this.estimate = Math.min(maxLimit, Math.max(minLimit, estimate));
    this.current = Math.floor(this.estimate);
  }
}
