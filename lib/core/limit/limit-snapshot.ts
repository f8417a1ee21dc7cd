import type { Criticality } from './criticality.js';
import type { LimitAlgorithmName } from './limit-options.js';

/**
 * What a concurrency limiter shows: its limit now, the requests that hold a
 * place or wait for one, and what it shed.
 *
 * @publicApi
 */
export interface ConcurrencyLimitSnapshot {
  name: string;
  algorithm: LimitAlgorithmName;
  /** How many requests may run at once, now. */
  limit: number;
  /** Requests holding a place. */
  inFlight: number;
  /** Requests waiting for one. */
  queued: number;
  maxQueue: number;
  /** Requests that took a place since the limiter was built. */
  admitted: number;
  /** Requests refused or sent out of the queue since the limiter was built. */
  shed: number;
  /** `shed`, by the criticality of the request shed. */
  shedBy: Record<Criticality, number>;
  /** Whether it shed a request in the last 10 s: health reports it `degraded` then, never `down`. */
  shedding: boolean;
}
