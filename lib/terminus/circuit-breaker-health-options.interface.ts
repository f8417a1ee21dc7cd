/** @publicApi */
export type CircuitBreakerHealthStatus = 'up' | 'degraded' | 'down';

/** Options of `CircuitBreakerHealthIndicator.isHealthy()`. @publicApi */
export interface CircuitBreakerHealthOptions {
  /** Which breakers (names, per-key families included) feed this check. Default: every breaker of the application. */
  breakers?: readonly string[];
  /**
   * What an open breaker reports (an isolated one is forced: see forcedOpenStatus). Default `'down'`: readiness fails
   * and the load balancer stops sending traffic to this replica. Use
   * `'degraded'` (HTTP 200, state visible) for a dependency every replica
   * shares: taking the whole fleet out of rotation would turn a dependency
   * outage into a full outage.
   */
  openStatus?: CircuitBreakerHealthStatus;
  /**
   * What a breaker held open by `force()` reports. Default `'up'`: a
   * maintenance window or an incident runbook is a decision, not a failure of
   * this replica, and taking replicas out of rotation for it would take down
   * what still works. It is counted under `forced`, not `open`, and its
   * details carry the reason.
   */
  forcedOpenStatus?: CircuitBreakerHealthStatus;
  /** What a half-open breaker reports. Default `'degraded'`. */
  halfOpenStatus?: CircuitBreakerHealthStatus;
  /**
   * Which concurrency limiters (`forRoot({ limiters })`) feed this check. Default: every limiter of the application;
   * `[]` for none.
   */
  limiters?: readonly string[];
  /**
   * What a limiter that shed a request in the last 10 s reports. Default `'degraded'`: it is protecting this
   * replica, which still serves what it can; `'down'` would take a busy replica out of rotation and push its load
   * onto the others.
   */
  sheddingStatus?: CircuitBreakerHealthStatus;
  /** `false` hides breaker names and failure rates, for health endpoints exposed to the public: only counts remain. Default `true`. */
  details?: boolean;
}
