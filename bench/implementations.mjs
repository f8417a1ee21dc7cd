// The implementations the benchmark compares, each behind the same small shape:
//
//   { target, call }  where `call` is the JavaScript expression (over `target`
//   and `dep`) that makes one protected call and returns its promise.
//
// The harness compiles one batch loop per implementation from `call`, so every
// implementation runs in its own monomorphic loop.

import CircuitBreaker from 'opossum';
import { circuitBreaker, ConsecutiveBreaker, CountBreaker, handleAll } from 'cockatiel';
// The framework-free engine (the package's `./core` export): children that only
// need a breaker start without loading Nest. The Nest layer is looked up by its
// scenario alone.
import { BREAKER_DEFAULTS, Breaker, withRetry } from '../dist/core/index.js';

export { Breaker };

/** The deadline `new Breaker(name)` gives every call, as labels print it ("2 s"): read from the build, so a label cannot outlive a change of the default. */
export const DEFAULT_DEADLINE = `${BREAKER_DEFAULTS.timeoutMs / 1000} s`;

/** A breaker that a recovery has just closed, ramping up at full share for as long as the run lasts. */
function ramping() {
  const breaker = new Breaker('bench', {
    timeoutMs: false,
    consecutiveFailures: 1,
    openDurationMs: 0,
    rampUp: { durationMs: 1e12, initialRatio: 1 },
  });
  breaker.acquire().fail(new Error('trip'));
  breaker.acquire().succeed();
  return breaker;
}

const CLOSED = 0;
const OPEN = 1;
const HALF_OPEN = 2;

/**
 * The near-floor cost of any breaker: opens after `threshold` failures in a
 * row, rejects with a fresh Error while open, lets calls through again after
 * `openMs`, closes on the first success.
 */
export class MinimalBreaker {
  state = CLOSED;
  failures = 0;
  openedAt = 0;

  constructor(threshold = 5, openMs = 30_000) {
    this.threshold = threshold;
    this.openMs = openMs;
  }

  async execute(fn) {
    if (this.state === OPEN) {
      if (Date.now() - this.openedAt < this.openMs) throw new Error('Circuit open');
      this.state = HALF_OPEN;
    }
    try {
      const value = await fn();
      this.failures = 0;
      this.state = CLOSED;
      return value;
    } catch (error) {
      this.failures++;
      if (this.state === HALF_OPEN || this.failures >= this.threshold) {
        this.state = OPEN;
        this.openedAt = Date.now();
      }
      throw error;
    }
  }
}

export const OPOSSUM_VERSION = '9.0.0';
export const COCKATIEL_VERSION = '3.2.1';

const HALF_OPEN_AFTER_MS = 30_000;

/** Factories of one fresh instance each; `dep` is the protected function (opossum binds it at construction). */
export const implementations = {
  raw: {
    label: 'raw (no breaker)',
    create: () => undefined,
    call: 'dep()',
  },
  minimal: {
    label: 'minimal',
    create: () => new MinimalBreaker(),
    call: 'target.execute(dep)',
  },
  // Without a deadline, like minimal and cockatiel: the engine's floor.
  ours: {
    label: 'ours',
    create: (_dep, options) => new Breaker('bench', { timeoutMs: false, ...options }),
    call: 'target.execute(dep)',
  },
  // Its defaults, with the default deadline every asynchronous call gets: like-for-like with opossum's
  // defaults (its own default timeout is 10 s; what a deadline costs a call does not depend on its length).
  oursDefaults: {
    label: `ours (defaults: ${DEFAULT_DEADLINE} deadline)`,
    create: (_dep, options) => new Breaker('bench', { ...options }),
    call: 'target.execute(dep)',
  },
  // The recovery options of issue 16, each configured and unused (closed, uncontended), then in use.
  oursBulkhead: {
    label: 'ours + bulkhead (uncontended)',
    create: () =>
      new Breaker('bench', { timeoutMs: false, bulkhead: { maxConcurrent: 1_000_000 } }),
    call: 'target.execute(dep)',
  },
  // Issue 30: the cap an algorithm finds; each call tells it its time as it settles.
  oursBulkheadAdaptive: {
    label: 'ours + adaptive bulkhead (aimd, uncontended)',
    create: () =>
      new Breaker('bench', {
        timeoutMs: false,
        bulkhead: { algorithm: 'aimd', initialLimit: 1_000, maxLimit: 1_000_000 },
      }),
    call: 'target.execute(dep)',
  },
  oursRampUp: {
    label: 'ours + rampUp (closed, not ramping)',
    create: () => new Breaker('bench', { timeoutMs: false, rampUp: { durationMs: 10_000 } }),
    call: 'target.execute(dep)',
  },
  oursRamping: {
    label: 'ours, ramping up (share 100 %)',
    create: ramping,
    call: 'target.execute(dep)',
  },
  oursHealthCheck: {
    label: 'ours + healthCheck (closed)',
    create: () =>
      new Breaker('bench', {
        timeoutMs: false,
        healthCheck: { fn: () => undefined, intervalMs: 1_000 },
      }),
    call: 'target.execute(dep)',
  },
  oursRetry: {
    label: 'withRetry(ours), succeeding',
    create: () => withRetry(new Breaker('bench', { timeoutMs: false }), { attempts: 3 }),
    call: 'target.execute(dep)',
  },
  opossumNoTimeout: {
    label: 'opossum (timeout: false)',
    create: (dep, options) => new CircuitBreaker(dep, { timeout: false, ...options }),
    call: 'target.fire()',
    dispose: (target) => target.shutdown(),
  },
  opossumDefaults: {
    label: 'opossum (defaults)',
    create: (dep, options) => new CircuitBreaker(dep, { ...options }),
    call: 'target.fire()',
    dispose: (target) => target.shutdown(),
  },
  cockatielConsecutive: {
    label: 'cockatiel Consecutive(5)',
    create: () =>
      circuitBreaker(handleAll, {
        halfOpenAfter: HALF_OPEN_AFTER_MS,
        breaker: new ConsecutiveBreaker(5),
      }),
    call: 'target.execute(dep)',
  },
  cockatielCount: {
    label: 'cockatiel Count(100)',
    create: (_dep, size = 100) =>
      circuitBreaker(handleAll, {
        halfOpenAfter: HALF_OPEN_AFTER_MS,
        breaker: new CountBreaker({ threshold: 0.5, size }),
      }),
    call: 'target.execute(dep)',
  },
};

/** Is this instance letting calls through (for the sanity checks after a scenario)? */
export function isClosed(target) {
  if (target === undefined) return true;
  if (target instanceof MinimalBreaker) return target.state === CLOSED;
  if (target instanceof Breaker) return target.state === 'closed';
  if (target.breaker instanceof Breaker) return target.breaker.state === 'closed';
  if (target instanceof CircuitBreaker) return target.closed;
  // Another build of ours (bench/scenarios/fault-injection.mjs's baseline).
  if (typeof target.state === 'string') return target.state === 'closed';
  return target.state === 0; // cockatiel CircuitState.Closed
}

export {
  CircuitBreaker as OpossumBreaker,
  circuitBreaker as cockatielBreaker,
  ConsecutiveBreaker,
  CountBreaker,
  handleAll,
};
