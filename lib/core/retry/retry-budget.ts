const BUCKETS = 10;
const BUCKET_MS = 1_000;
/** The span the budget looks back over. */
export const RETRY_BUDGET_WINDOW_MS = BUCKETS * BUCKET_MS;

/**
 * The calls and retries made through one breaker over the last 10 s, in
 * one-second buckets (as Finagle's `RetryBudget` keeps them): what each
 * caller's budget is judged on. Callers with different budgets share the
 * counts and judge them by their own ratio and floor.
 *
 * @internal
 */
export class RetryBudget {
  private readonly calls = new Float64Array(BUCKETS);
  private readonly retries = new Float64Array(BUCKETS);
  private callTotal = 0;
  private retryTotal = 0;
  private head = 0;
  private headStart: number;

  constructor(now: number) {
    this.headStart = now;
  }

  /** A first attempt made through a retry policy: what retries are a share of. */
  deposit(now: number): void {
    this.refresh(now);
    this.calls[this.head]!++;
    this.callTotal++;
  }

  /** Takes one retry if `ratio` of the calls plus `minPerSecond` per second allow it. */
  withdraw(now: number, ratio: number, minPerSecond: number): boolean {
    this.refresh(now);
    const allowed = ratio * this.callTotal + minPerSecond * (RETRY_BUDGET_WINDOW_MS / 1_000);
    if (this.retryTotal + 1 > allowed) return false;
    this.retries[this.head]!++;
    this.retryTotal++;
    return true;
  }

  private refresh(now: number): void {
    const elapsed = Math.floor((now - this.headStart) / BUCKET_MS);
    if (elapsed <= 0) return;
    for (let i = 0; i < Math.min(elapsed, BUCKETS); i++) {
      this.head = (this.head + 1) % BUCKETS;
      this.callTotal -= this.calls[this.head]!;
      this.retryTotal -= this.retries[this.head]!;
      this.calls[this.head] = 0;
      this.retries[this.head] = 0;
    }
    this.headStart += elapsed * BUCKET_MS;
  }
}

// Kept beside the breaker, not in it: a breaker nobody retries through holds nothing for it.
const budgets = new WeakMap<object, RetryBudget>();

/** The retry budget of `breaker`, made on first use. @internal */
export function budgetOf(breaker: object, now: number): RetryBudget {
  let budget = budgets.get(breaker);
  if (budget === undefined) budgets.set(breaker, (budget = new RetryBudget(now)));
  return budget;
}
