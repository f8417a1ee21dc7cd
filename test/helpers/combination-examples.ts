import type { Combination, Step } from './combination-run.js';

/**
 * What the combination suite found while it was written, shrunk: each run
 * first in every pass (fast-check's `examples`), so a fix is checked on its
 * own reproduction whatever the seed draws. `item` is issue 25's item, or
 * `N<n>` for a defect the issue does not list (each fixed with a regression test of its own),
 * or `M<n>` for a defect of the suite's own model (fixed there, with a comment on why).
 * `found` is the seed of the search that found it, with the suite as it was then.
 */
export interface FoundExample {
  item: number | string;
  found: string;
  invariant: string;
  example: [Combination, Step[]];
}

const BASE: Combination = {
  window: { type: 'count', size: 1 },
  rate: false,
  minimumThroughput: 1,
  failureRateThreshold: 0.3,
  consecutive: undefined,
  timeoutMs: false,
  openDurationMs: 20,
  jitter: 0,
  halfOpen: { maxProbes: 1, maxConcurrent: 1, successesToClose: 1, maxWaitMs: 20 },
  bulkhead: undefined,
  rampUp: undefined,
  healthCheck: undefined,
  perKey: undefined,
  retry: undefined,
  front: 'engine',
  fallback: false,
  random: 'fair',
  seed: 1,
};

const call = (key = 0, signal = false): Step => ({ do: 'call', key, signal });

export const FOUND: FoundExample[] = [
  {
    item: 1,
    found: 'seed 20261203',
    invariant: 'the reported state matches the admission the next call gets',
    example: [
      {
        ...BASE,
        bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 20 },
        front: 'decorator',
        fallback: true,
      },
      [call(), call()],
    ],
  },
  {
    item: 8,
    found: 'seed 20261203',
    invariant: 'the bulkhead cap is never exceeded',
    example: [
      {
        ...BASE,
        bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 20 },
        perKey: { maxKeys: 1, idleMs: undefined },
      },
      [call(1), call(0), call(1)],
    ],
  },
  {
    item: 9,
    found: 'seed 20261203',
    invariant: 'every caller settles exactly once',
    example: [
      {
        ...BASE,
        timeoutMs: 20,
        jitter: 0.5,
        perKey: { maxKeys: 2, idleMs: undefined },
        retry: { attempts: 3, initialMs: 30, budget: false },
        random: 'hostile',
      },
      [
        { do: 'inject', rate: 0.3 },
        call(1),
        { do: 'handover', pick: 0, next: 'call', target: 0, depth: 0 },
        { do: 'advance', ms: 130 },
        { do: 'inject', rate: 1 },
        call(0),
        call(1),
      ],
    ],
  },
  {
    item: 11,
    found: 'seed 20261203',
    invariant: 'totals add up',
    example: [
      { ...BASE, window: { type: 'time', durationMs: 100, buckets: 1 }, timeoutMs: 20 },
      [
        call(),
        { do: 'advance', ms: 40 },
        { do: 'handover', pick: 0, next: 'call', target: 0, depth: 0 },
        { do: 'control', what: 'force-open' },
      ],
    ],
  },
  {
    item: 13,
    found: 'seed 20261203',
    invariant: "a caller's abort reaches its call",
    example: [
      {
        ...BASE,
        window: { type: 'time', durationMs: 100, buckets: 1 },
        timeoutMs: 20,
        bulkhead: { maxConcurrent: 3, maxQueue: 1, queueTimeoutMs: 20 },
      },
      [
        call(),
        call(),
        call(),
        call(0, true),
        { do: 'handover', pick: 0, next: 'abort', target: 0, depth: 1 },
      ],
    ],
  },
  {
    item: 13,
    found: 'seed 20261203',
    invariant: 'a local refusal never counts as a dependency failure',
    example: [
      {
        ...BASE,
        timeoutMs: 20,
        bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 20 },
      },
      [
        call(),
        call(0, true),
        { do: 'handover', pick: 0, next: 'abort', target: 0, depth: 1 },
        { do: 'advance', ms: 20 },
      ],
    ],
  },
  {
    item: 'N1',
    found: 'seed 20261203',
    invariant: 'totals add up',
    example: [
      {
        ...BASE,
        window: { type: 'time', durationMs: 100, buckets: 1 },
        timeoutMs: 20,
        halfOpen: { maxProbes: 2, maxConcurrent: 2, successesToClose: 2, maxWaitMs: 20 },
        retry: { attempts: 2, initialMs: 20, budget: { ratio: 0, minPerSecond: 1 } },
      },
      [
        call(),
        call(),
        { do: 'settle', pick: 0, outcome: 'f' },
        { do: 'settle', pick: 0, outcome: 'f' },
      ],
    ],
  },
  {
    item: 'N1',
    found: 'seed 20261203',
    invariant: 'totals add up',
    example: [
      {
        ...BASE,
        window: { type: 'time', durationMs: 100, buckets: 1 },
        timeoutMs: 20,
        healthCheck: { intervalMs: 20, healthy: [false, true], onSuccess: 'closed' },
        retry: { attempts: 2, initialMs: 21, budget: { ratio: 0, minPerSecond: 1 } },
      },
      [call(), { do: 'advance', ms: 20 }],
    ],
  },
  {
    item: 'N2',
    found: 'seed 3',
    invariant: 'the reported state matches the admission the next call gets',
    example: [
      { ...BASE, perKey: { maxKeys: 1, idleMs: undefined } },
      [
        call(0),
        { do: 'settle', pick: 0, outcome: 'f' },
        call(1),
        { do: 'settle', pick: 0, outcome: 'f' },
        call(1),
      ],
    ],
  },
  {
    item: 'N3',
    found: 'seed 2',
    invariant: 'the reported state matches the admission the next call gets',
    example: [
      { ...BASE, bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 100 } },
      [call(), { do: 'control', what: 'force-open' }, call()],
    ],
  },
  {
    item: 'N6',
    found: 'seed 20261203',
    invariant: 'the bulkhead cap is never exceeded',
    example: [
      {
        ...BASE,
        bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 20 },
        perKey: { maxKeys: 1, idleMs: undefined },
      },
      [
        call(0),
        call(2),
        { do: 'settle', pick: 0, outcome: 's' },
        call(2),
        { do: 'settle', pick: 0, outcome: 's' },
      ],
    ],
  },
  {
    item: 'N5',
    found: 'seed 9',
    invariant: 'a fallback answers exactly the calls counted failed or refused',
    example: [
      {
        ...BASE,
        retry: { attempts: 2, initialMs: 1, budget: { ratio: 0, minPerSecond: 0 } },
        front: 'decorator',
        fallback: true,
      },
      [{ do: 'control', what: 'force-disabled' }, call(), { do: 'settle', pick: 0, outcome: 'f' }],
    ],
  },
  {
    item: 'N7',
    found: 'seed 1',
    invariant: 'the bulkhead cap is never exceeded',
    example: [
      {
        ...BASE,
        bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 20 },
        perKey: { maxKeys: 1, idleMs: undefined },
      },
      [call(1), call(0), { do: 'settle', pick: 1, outcome: 'f' }, call(1)],
    ],
  },
  {
    item: 'N8',
    found: 'seed 7',
    invariant: 'the bulkhead cap is never exceeded',
    example: [
      {
        ...BASE,
        consecutive: 2,
        bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 20 },
        perKey: { maxKeys: 1, idleMs: undefined },
        retry: { attempts: 2, initialMs: 1, budget: false },
        front: 'decorator',
      },
      [
        call(2),
        { do: 'settle', pick: 0, outcome: 'f' },
        call(0),
        { do: 'handover', pick: 0, next: 'call', target: 2, depth: 0 },
        { do: 'advance', ms: 1 },
      ],
    ],
  },
  {
    // An evicted child that opens sends away the waiters of the bulkhead kept for its key, the key's newer
    // child's too; its last call then left it idle, and the family dropped it while a sent-away caller came
    // back to take a slot of it, beside the calls the key's next child capped afresh.
    item: 'N9',
    found: 'seed 79',
    invariant: 'the bulkhead cap is never exceeded',
    example: [
      {
        ...BASE,
        window: { type: 'time', durationMs: 100, buckets: 1 },
        bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 20 },
        perKey: { maxKeys: 1, idleMs: undefined },
      },
      [
        { do: 'handover', pick: 0, next: 'call', target: 992_983_674, depth: 0 },
        call(0),
        call(4),
        call(0),
        { do: 'settle', pick: 0, outcome: 'f' },
        call(4),
      ],
    ],
  },
  {
    item: 'M1',
    found: 'seed 7',
    invariant: 'a local refusal never counts as a dependency failure',
    example: [
      { ...BASE, front: 'decorator', fallback: true },
      [
        call(),
        { do: 'settle', pick: 0, outcome: 'f' },
        { do: 'advance', ms: 20 },
        call(),
        { do: 'advance', ms: 20 },
      ],
    ],
  },
  {
    item: 'M2',
    found: 'seed 8',
    invariant: 'the bulkhead cap is never exceeded',
    example: [
      {
        ...BASE,
        window: { type: 'time', durationMs: 100, buckets: 1 },
        consecutive: 1,
        bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 20 },
        perKey: { maxKeys: 1, idleMs: undefined },
        retry: { attempts: 2, initialMs: 1, budget: { ratio: 0, minPerSecond: 0.1 } },
      },
      [
        { do: 'handover', pick: 0, next: 'call', target: 0, depth: 0 },
        call(1),
        { do: 'settle', pick: 0, outcome: 'f' },
        call(0),
        { do: 'control', what: 'force-disabled' },
        { do: 'advance', ms: 1 },
        { do: 'settle', pick: 0, outcome: 's' },
      ],
    ],
  },
  {
    item: 'M3',
    found: 'seed 16',
    invariant: 'the reported state matches the admission the next call gets',
    example: [
      {
        ...BASE,
        window: { type: 'time', durationMs: 100, buckets: 1 },
        timeoutMs: 20,
        bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 20 },
        rampUp: { durationMs: 50, initialRatio: 0.1 },
        healthCheck: { intervalMs: 20, healthy: [true], onSuccess: 'closed' },
        retry: { attempts: 2, initialMs: 1, budget: { ratio: 0, minPerSecond: 0 } },
      },
      [call(), { do: 'advance', ms: 40 }, call(), call(), { do: 'reconfigure', variant: 0 }],
    ],
  },
  {
    item: 'M4',
    found: 'seed 48',
    invariant: 'the reported state matches the admission the next call gets',
    example: [
      {
        ...BASE,
        bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 20 },
        perKey: { maxKeys: 1, idleMs: undefined },
        front: 'decorator',
      },
      [call(2), call(2), call(3), call(2)],
    ],
  },
  {
    item: 'M5',
    found: 'seed 104',
    invariant: 'a local refusal never counts as a dependency failure',
    example: [
      {
        ...BASE,
        window: { type: 'time', durationMs: 100, buckets: 1 },
        timeoutMs: 20,
        bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 20 },
        perKey: { maxKeys: 1, idleMs: undefined },
        retry: { attempts: 2, initialMs: 1, budget: false },
      },
      [call(2), call(2), call(0), { do: 'control', what: 'disable' }, call(2)],
    ],
  },
];
