import type { OptionChecker } from '../options/option-checker.js';
import { breakerOptionMessages } from '../options/breaker-options.messages.js';
import {
  aFunction,
  integerFrom,
  MAX_TIMER_MS,
  numberIn,
  oneOf,
  POSITIVE_DURATION,
  RATIO,
  timerDuration,
} from '../options/option-values.js';
import { type TableEntry } from '../options/option-rules.js';
import type { HealthCheckOptions } from './recovery-options.interface.js';
import { LIMIT_DEFAULTS, type LimitAlgorithmName } from '../limit/limit-options.js';
import type { ResolvedBreakerOptions } from '../options/resolved-breaker-options.interface.js';

export type * from './recovery-options.interface.js';

/** @internal */
export const RECOVERY_KEYS = ['bulkhead', 'rampUp', 'healthCheck'] as const;
const OBJECTS = {
  bulkhead: [
    [
      'maxConcurrent',
      'algorithm',
      'initialLimit',
      'minLimit',
      'maxLimit',
      'maxQueue',
      'queueTimeoutMs',
    ],
    '{ maxConcurrent, maxQueue?, queueTimeoutMs? } or { algorithm, initialLimit?, minLimit?, maxLimit?, maxQueue?, queueTimeoutMs? }',
  ],
  rampUp: [['durationMs', 'initialRatio'], '{ durationMs, initialRatio? }'],
  healthCheck: [
    ['fn', 'intervalMs', 'timeoutMs', 'onSuccess'],
    '{ fn, intervalMs, timeoutMs?, onSuccess? }',
  ],
} as const;
const DEFAULT_QUEUE_TIMEOUT_MS = 10_000;
const DEFAULT_INITIAL_RATIO = 0.1;

/** @internal The shape checks of `copyBreakerOptions()` for the recovery options: plain objects of known keys, copied. */
export function copyRecoveryOptions(check: OptionChecker, copy: Record<string, unknown>): void {
  for (const key of RECOVERY_KEYS) {
    if (copy[key] === undefined) continue;
    const [known, expected] = OBJECTS[key];
    copy[key] = check.record(key, copy[key], known, `an object ${expected}`);
  }
}

/** @internal The recovery options as given, after their shape checks. */
export interface RecoveryGiven {
  readonly bulkhead?: unknown;
  readonly rampUp?: unknown;
  readonly healthCheck?: unknown;
}

/** @internal The fields the recovery rules resolve, and the breaker's deadline they read. */
export interface RecoveryFields {
  timeoutMs: number | undefined;
  bulkheadAlgorithm: AdaptiveAlgorithm | undefined;
  bulkheadMaxConcurrent: number;
  bulkheadMinLimit: number;
  bulkheadMaxLimit: number;
  bulkheadInitialLimit: number;
  bulkheadMaxQueue: number;
  bulkheadQueueTimeoutMs: number;
  rampUpDurationMs: number;
  rampUpInitialRatio: number;
  healthCheckFn: HealthCheckOptions['fn'];
  healthCheckIntervalMs: number;
  healthCheckTimeoutMs: number;
  healthCheckOnSuccess: 'half-open' | 'closed';
}

const TIMER = timerDuration(MAX_TIMER_MS);

/** The algorithms of an adaptive bulkhead: a fixed cap is `maxConcurrent`. */
type AdaptiveAlgorithm = Exclude<LimitAlgorithmName, 'fixed'>;
const ADAPTIVE_ALGORITHMS: readonly AdaptiveAlgorithm[] = ['gradient', 'aimd'];

/** The bulkhead's options as given (after the shape check). */
function bulkheadOf(given: RecoveryGiven): Record<string, unknown> | undefined {
  return given.bulkhead as Record<string, unknown> | undefined;
}

/** Whether the bulkhead asks for an adaptive cap. */
function adaptive(given: RecoveryGiven): boolean {
  return bulkheadOf(given)?.algorithm !== undefined;
}

/** An adaptive cap's option (`initialLimit`...) given to a fixed bulkhead: an error naming both. */
function limitNeedsAlgorithm(key: string): TableEntry<RecoveryFields, RecoveryGiven> {
  return {
    option: `bulkhead.${key}`,
    conflicts: (_fields, given) => bulkheadOf(given)?.[key] !== undefined && !adaptive(given),
    message: (check) =>
      breakerOptionMessages.limitWithoutAlgorithm(
        check.pathOf(`bulkhead.${key}`),
        check.pathOf('bulkhead.algorithm'),
        check.pathOf('bulkhead.maxConcurrent'),
      ),
  };
}

/** The bulkhead's cap: `maxConcurrent`, or an algorithm and its bounds (as a concurrency limiter's). */
const BULKHEAD_CAP_RULES: readonly TableEntry<RecoveryFields, RecoveryGiven>[] = [
  {
    option: 'bulkhead.algorithm',
    field: 'bulkheadAlgorithm',
    check: oneOf(ADAPTIVE_ALGORITHMS),
    default: undefined,
  },
  {
    option: 'bulkhead.maxConcurrent',
    conflicts: (_fields, given) =>
      bulkheadOf(given)?.maxConcurrent !== undefined && adaptive(given),
    message: (check) =>
      breakerOptionMessages.fixedAndAdaptiveCap(
        check.pathOf('bulkhead.maxConcurrent'),
        check.pathOf('bulkhead.algorithm'),
        check.pathOf('bulkhead.initialLimit'),
      ),
  },
  // Before maxConcurrent's own check: a bound given without its algorithm is what to name, not a missing cap.
  limitNeedsAlgorithm('initialLimit'),
  limitNeedsAlgorithm('minLimit'),
  limitNeedsAlgorithm('maxLimit'),
  {
    option: 'bulkhead.maxConcurrent',
    field: 'bulkheadMaxConcurrent',
    check: integerFrom(1),
    required: true,
    when: (given) => !adaptive(given),
  },
  {
    option: 'bulkhead.minLimit',
    field: 'bulkheadMinLimit',
    check: integerFrom(1),
    default: LIMIT_DEFAULTS.minLimit,
    when: adaptive,
  },
  {
    option: 'bulkhead.maxLimit',
    field: 'bulkheadMaxLimit',
    check: integerFrom(1),
    default: LIMIT_DEFAULTS.maxLimit,
    when: adaptive,
  },
  {
    option: 'bulkhead.maxLimit',
    conflicts: (fields, given) =>
      adaptive(given) && fields.bulkheadMaxLimit < fields.bulkheadMinLimit,
    message: (check, fields) =>
      breakerOptionMessages.maxLimitBelowMin(
        check.pathOf('bulkhead.maxLimit'),
        fields.bulkheadMaxLimit,
        check.pathOf('bulkhead.minLimit'),
        fields.bulkheadMinLimit,
      ),
  },
  {
    option: 'bulkhead.initialLimit',
    field: 'bulkheadInitialLimit',
    check: integerFrom(1),
    derive: (fields) =>
      Math.min(
        fields.bulkheadMaxLimit,
        Math.max(fields.bulkheadMinLimit, LIMIT_DEFAULTS.initialLimit),
      ),
    when: adaptive,
  },
  {
    option: 'bulkhead.initialLimit',
    conflicts: (fields, given) =>
      adaptive(given) &&
      (fields.bulkheadInitialLimit < fields.bulkheadMinLimit ||
        fields.bulkheadInitialLimit > fields.bulkheadMaxLimit),
    message: (check, fields) =>
      breakerOptionMessages.initialLimitOutside(
        check.pathOf('bulkhead.initialLimit'),
        fields.bulkheadInitialLimit,
        check.pathOf('bulkhead.minLimit'),
        fields.bulkheadMinLimit,
        check.pathOf('bulkhead.maxLimit'),
        fields.bulkheadMaxLimit,
      ),
  },
];

/**
 * The recovery options' rules, after the breaker's (they read its `timeoutMs`).
 *
 * @internal
 */
export const RECOVERY_RULES: readonly TableEntry<RecoveryFields, RecoveryGiven>[] = [
  ...BULKHEAD_CAP_RULES,
  {
    option: 'bulkhead.maxQueue',
    field: 'bulkheadMaxQueue',
    check: integerFrom(0),
    default: 0,
  },
  {
    option: 'bulkhead.queueTimeoutMs',
    field: 'bulkheadQueueTimeoutMs',
    check: TIMER,
    derive: (fields) => fields.timeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS,
  },
  {
    option: 'bulkhead.queueTimeoutMs',
    conflicts: (fields, given) =>
      given.bulkhead !== undefined &&
      fields.timeoutMs !== undefined &&
      fields.bulkheadQueueTimeoutMs > fields.timeoutMs,
    message: (check, fields) =>
      breakerOptionMessages.queueOverDeadline(
        check.pathOf('bulkhead.queueTimeoutMs'),
        fields.bulkheadQueueTimeoutMs,
        check.pathOf('timeoutMs'),
        fields.timeoutMs!,
      ),
  },
  {
    option: 'rampUp.durationMs',
    field: 'rampUpDurationMs',
    check: POSITIVE_DURATION,
    required: true,
  },
  {
    option: 'rampUp.initialRatio',
    field: 'rampUpInitialRatio',
    check: RATIO,
    default: DEFAULT_INITIAL_RATIO,
  },
  {
    option: 'healthCheck.fn',
    field: 'healthCheckFn',
    check: aFunction('a function returning the health check (a Promise)'),
    required: true,
  },
  // A timer cannot wait longer; and at least a millisecond, or one check would follow another without end.
  {
    option: 'healthCheck.intervalMs',
    field: 'healthCheckIntervalMs',
    check: numberIn(
      { min: 1, max: MAX_TIMER_MS },
      `a number of milliseconds in [1, ${MAX_TIMER_MS}]`,
    ),
    required: true,
  },
  {
    option: 'healthCheck.timeoutMs',
    field: 'healthCheckTimeoutMs',
    check: TIMER,
    derive: (fields) => fields.healthCheckIntervalMs,
  },
  {
    option: 'healthCheck.timeoutMs',
    conflicts: (fields, given) =>
      given.healthCheck !== undefined && fields.healthCheckTimeoutMs > fields.healthCheckIntervalMs,
    message: (check, fields) =>
      breakerOptionMessages.healthCheckTimeoutOverInterval(
        check.pathOf('healthCheck.timeoutMs'),
        fields.healthCheckTimeoutMs,
        check.pathOf('healthCheck.intervalMs'),
        fields.healthCheckIntervalMs,
      ),
  },
  {
    option: 'healthCheck.onSuccess',
    field: 'healthCheckOnSuccess',
    check: oneOf(['half-open', 'closed']),
    default: 'half-open',
  },
];

/** The bulkhead resolved: its fixed cap, or its algorithm and bounds. */
function bulkheadOptionsOf(
  fields: RecoveryFields,
): NonNullable<ResolvedBreakerOptions['bulkhead']> {
  const maxQueue = fields.bulkheadMaxQueue;
  const queueTimeoutMs = fields.bulkheadQueueTimeoutMs;
  const algorithm = fields.bulkheadAlgorithm;
  if (algorithm === undefined)
    return Object.freeze({ maxConcurrent: fields.bulkheadMaxConcurrent, maxQueue, queueTimeoutMs });
  return Object.freeze({
    algorithm,
    initialLimit: fields.bulkheadInitialLimit,
    minLimit: fields.bulkheadMinLimit,
    maxLimit: fields.bulkheadMaxLimit,
    maxQueue,
    queueTimeoutMs,
  });
}

/** @internal The recovery options resolved, from their fields. */
export function recoveryOptionsOf(
  fields: RecoveryFields,
  given: RecoveryGiven,
): Pick<ResolvedBreakerOptions, 'bulkhead' | 'rampUp' | 'healthCheck'> {
  const bulkhead = given.bulkhead === undefined ? undefined : bulkheadOptionsOf(fields);
  const rampUp =
    given.rampUp === undefined
      ? undefined
      : Object.freeze({
          durationMs: fields.rampUpDurationMs,
          initialRatio: fields.rampUpInitialRatio,
        });
  const healthCheck =
    given.healthCheck === undefined
      ? undefined
      : Object.freeze({
          fn: fields.healthCheckFn,
          intervalMs: fields.healthCheckIntervalMs,
          timeoutMs: fields.healthCheckTimeoutMs,
          onSuccess: fields.healthCheckOnSuccess,
        });
  return { bulkhead, rampUp, healthCheck };
}
