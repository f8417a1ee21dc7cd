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
import type { ResolvedBreakerOptions } from '../options/resolved-breaker-options.interface.js';

export type * from './recovery-options.interface.js';

/** @internal */
export const RECOVERY_KEYS = ['bulkhead', 'rampUp', 'healthCheck'] as const;
const OBJECTS = {
  bulkhead: [
    ['maxConcurrent', 'maxQueue', 'queueTimeoutMs'],
    '{ maxConcurrent, maxQueue?, queueTimeoutMs? }',
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
  bulkheadMaxConcurrent: number;
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

/**
 * The recovery options' rules, after the breaker's (they read its `timeoutMs`).
 *
 * @internal
 */
export const RECOVERY_RULES: readonly TableEntry<RecoveryFields, RecoveryGiven>[] = [
  {
    option: 'bulkhead.maxConcurrent',
    field: 'bulkheadMaxConcurrent',
    check: integerFrom(1),
    required: true,
  },
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

/** @internal The recovery options resolved, from their fields. */
export function recoveryOptionsOf(
  fields: RecoveryFields,
  given: RecoveryGiven,
): Pick<ResolvedBreakerOptions, 'bulkhead' | 'rampUp' | 'healthCheck'> {
  const bulkhead =
    given.bulkhead === undefined
      ? undefined
      : Object.freeze({
          maxConcurrent: fields.bulkheadMaxConcurrent,
          maxQueue: fields.bulkheadMaxQueue,
          queueTimeoutMs: fields.bulkheadQueueTimeoutMs,
        });
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
