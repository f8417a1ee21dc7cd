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
import type {
  RecoveryProbeOptions,
  ResolvedRecoveryOptions,
} from './recovery-options.interface.js';

export type * from './recovery-options.interface.js';

/** @internal */
export const RECOVERY_KEYS = ['bulkhead', 'rampUp', 'probe'] as const;
const OBJECTS = {
  bulkhead: [
    ['maxConcurrent', 'maxQueue', 'queueTimeoutMs'],
    '{ maxConcurrent, maxQueue?, queueTimeoutMs? }',
  ],
  rampUp: [['durationMs', 'initialRatio'], '{ durationMs, initialRatio? }'],
  probe: [
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
  readonly probe?: unknown;
}

/** @internal The fields the recovery rules resolve, and the breaker's deadline they read. */
export interface RecoveryFields {
  timeoutMs: number | undefined;
  bulkheadMaxConcurrent: number;
  bulkheadMaxQueue: number;
  bulkheadQueueTimeoutMs: number;
  rampUpDurationMs: number;
  rampUpInitialRatio: number;
  activeProbeFn: RecoveryProbeOptions['fn'];
  activeProbeIntervalMs: number;
  activeProbeTimeoutMs: number;
  activeProbeOnSuccess: 'half-open' | 'closed';
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
    option: 'probe.fn',
    field: 'activeProbeFn',
    check: aFunction('a function returning the health check (a Promise)'),
    required: true,
  },
  // A timer cannot wait longer; and at least a millisecond, or one probe would follow another without end.
  {
    option: 'probe.intervalMs',
    field: 'activeProbeIntervalMs',
    check: numberIn(
      { min: 1, max: MAX_TIMER_MS },
      `a number of milliseconds in [1, ${MAX_TIMER_MS}]`,
    ),
    required: true,
  },
  {
    option: 'probe.timeoutMs',
    field: 'activeProbeTimeoutMs',
    check: TIMER,
    derive: (fields) => fields.activeProbeIntervalMs,
  },
  {
    option: 'probe.timeoutMs',
    conflicts: (fields, given) =>
      given.probe !== undefined && fields.activeProbeTimeoutMs > fields.activeProbeIntervalMs,
    message: (check, fields) =>
      breakerOptionMessages.probeTimeoutOverInterval(
        check.pathOf('probe.timeoutMs'),
        fields.activeProbeTimeoutMs,
        check.pathOf('probe.intervalMs'),
        fields.activeProbeIntervalMs,
      ),
  },
  {
    option: 'probe.onSuccess',
    field: 'activeProbeOnSuccess',
    check: oneOf(['half-open', 'closed']),
    default: 'half-open',
  },
];

/** @internal The recovery options resolved, from their fields. */
export function recoveryOptionsOf(
  fields: RecoveryFields,
  given: RecoveryGiven,
): ResolvedRecoveryOptions {
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
  const probe =
    given.probe === undefined
      ? undefined
      : Object.freeze({
          fn: fields.activeProbeFn,
          intervalMs: fields.activeProbeIntervalMs,
          timeoutMs: fields.activeProbeTimeoutMs,
          onSuccess: fields.activeProbeOnSuccess,
        });
  const guarded = bulkhead !== undefined || rampUp !== undefined || probe !== undefined;
  return { guarded, bulkhead, rampUp, probe };
}
