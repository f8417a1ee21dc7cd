const BUCKETS = 10;

/**
 * The evidence of client-side throttling (Google SRE, "Handling Overload"):
 * how many calls reached the dependency and how many it accepted, over a time
 * window of its own. It ages with time whatever the breaker's outcome window
 * is: a count window only ages by new calls, and while calls are being shed
 * few arrive, so the evidence of a past overload would never leave.
 *
 * A request is recorded when it settles, with its answer, where SRE records it
 * when sent: a call may outlast this window (seconds, not SRE's two minutes),
 * and a request recorded at send would leave before its answer came (a slow
 * 429 would never throttle), while calls in flight would count as refused (a
 * slow, healthy dependency would be shed). Reacting when the 429s come back,
 * one round trip after those calls were sent, is the price. Calls shed
 * here are counted for the snapshot only: a call that was not made is no
 * evidence that the dependency is overloaded.
 *
 * A breaker creates one on the first overload and drops it once the window
 * holds none: a dependency that never sheds load costs nothing.
 *
 * @internal
 */
export class OverloadThrottle {
  private readonly requests = new Float64Array(BUCKETS);
  private readonly accepts = new Float64Array(BUCKETS);
  private readonly shedCalls = new Float64Array(BUCKETS);
  private readonly bucketMs: number;
  private head = 0;
  /** The start of the head bucket's interval. */
  private headStart: number;
  private requestTotal = 0;
  private acceptTotal = 0;
  private shedTotal = 0;

  constructor(windowMs: number, now: number, acceptedBefore: number) {
    this.bucketMs = Math.max(1, windowMs / BUCKETS);
    this.headStart = now;
    this.requests[0] = this.accepts[0] = this.requestTotal = this.acceptTotal = acceptedBefore;
  }

  /** Requests refused by the dependency still in the window. */
  get overloads(): number {
    return this.requestTotal - this.acceptTotal;
  }

  get shed(): number {
    return this.shedTotal;
  }

  /** A call that reached the dependency: accepted, or refused as overloaded. */
  record(overloaded: boolean, now: number): void {
    this.refresh(now);
    this.requests[this.head]!++;
    this.requestTotal++;
    if (!overloaded) {
      this.accepts[this.head]!++;
      this.acceptTotal++;
    }
  }

  /**
   * The share of calls to shed now: (requests - k·accepts) / (requests + 1),
   * and 0 below `minimumRequests` so that one 429 cannot shed half the traffic.
   */
  rejectProbability(k: number, minimumRequests: number, now: number): number {
    this.refresh(now);
    const requests = this.requestTotal;
    if (requests - this.acceptTotal === 0 || requests < minimumRequests) return 0;
    return Math.max(0, (requests - k * this.acceptTotal) / (requests + 1));
  }

  countShed(now: number): void {
    this.refresh(now);
    this.shedCalls[this.head]!++;
    this.shedTotal++;
  }

  /** Moves the window to `now`, dropping the buckets that left it. */
  refresh(now: number): void {
    const elapsed = Math.floor((now - this.headStart) / this.bucketMs);
    if (elapsed <= 0) return;
    const steps = Math.min(elapsed, BUCKETS);
    for (let i = 0; i < steps; i++) {
      this.head = (this.head + 1) % BUCKETS;
      this.requestTotal -= this.requests[this.head]!;
      this.acceptTotal -= this.accepts[this.head]!;
      this.shedTotal -= this.shedCalls[this.head]!;
      this.requests[this.head] = 0;
      this.accepts[this.head] = 0;
      this.shedCalls[this.head] = 0;
    }
    this.headStart += elapsed * this.bucketMs;
  }
}
