import { BREAKER_DEFAULTS, type BreakerOptions } from './breaker-options.js';
import { breakerOptionMessages } from './breaker-options.messages.js';
import type { ErrorClassifier, ResultClassifier } from '../classify/classify.js';
import {
  aFunction,
  durationFrom,
  integerFrom,
  MAX_TIMER_MS,
  numberIn,
  POSITIVE_DURATION,
  RATIO,
  timerDuration,
  UNIT,
} from './option-values.js';
import { optionTable, type TableEntry } from './option-rules.js';
import { RECOVERY_RULES, type RecoveryFields } from '../recovery/recovery-options.js';

/*
 * The table of a breaker's options: one entry per option, in the order they
 * are checked (an option whose default depends on another comes after it),
 * and an entry per pair that cannot go together, where the pair is known.
 * The defaults are those of `BREAKER_DEFAULTS` and docs/options.md.
 */

/** @internal The fields a breaker's rules resolve, before they are put together as `ResolvedBreakerOptions`. */
export interface BreakerFields extends RecoveryFields {
  /** Set for a count window only (the default one included). */
  windowSize: number | undefined;
  windowBuckets: number;
  windowDurationMs: number;
  consecutiveFailures: number | undefined;
  failureRateThreshold: number;
  minimumThroughput: number;
  slowCallDurationMs: number | undefined;
  slowCallRateThreshold: number | undefined;
  openDurationMs: number;
  backoffMultiplier: number;
  backoffMaxMs: number;
  jitter: number;
  maxRetryAfterMs: number;
  maxProbes: number;
  maxConcurrentProbes: number;
  successesToClose: number;
  probeTimeoutMs: number | undefined;
  probeMaxWaitMs: number;
  overloadK: number;
  classify: ErrorClassifier | undefined;
  classifyResult: ResultClassifier | undefined;
  perKeyMaxKeys: number;
  perKeyIdleMs: number | undefined;
  perKeyMaxKeyLength: number;
  aggregateOpenWhenOpenRatio: number;
  aggregateMinKeys: number;
  shareQuorum: number | 'auto';
}

type Entry = TableEntry<BreakerFields, BreakerOptions>;

const countWindow = (given: BreakerOptions) => given.window?.type !== 'time';
const timeWindow = (given: BreakerOptions) => given.window?.type === 'time';
const AT_LEAST_ONE = integerFrom(1);
const ANY_DURATION = durationFrom(0);
const FACTOR = numberIn({ min: 1, max: Number.MAX_VALUE }, 'a finite number >= 1');

const WINDOW_RULES: readonly Entry[] = [
  // A byte per slot: a million slots is already far past any useful window.
  {
    option: 'window.size',
    field: 'windowSize',
    check: numberIn({ min: 1, max: 1_000_000, integer: true }, 'an integer in [1, 1000000]'),
    default: BREAKER_DEFAULTS.windowSize,
    required: true,
    when: countWindow,
  },
  {
    option: 'window.buckets',
    field: 'windowBuckets',
    check: numberIn({ min: 1, max: 1000, integer: true }, 'an integer in [1, 1000]'),
    default: BREAKER_DEFAULTS.timeWindowBuckets,
    when: timeWindow,
  },
  {
    option: 'window.durationMs',
    field: 'windowDurationMs',
    // At least a millisecond per bucket: the bound is the buckets just resolved.
    check: (check, option, value, optional, fields) =>
      check.number(
        option,
        value,
        { min: fields.windowBuckets, max: Number.MAX_VALUE },
        `a finite number of milliseconds >= ${fields.windowBuckets}`,
        optional,
      ),
    required: true,
    when: timeWindow,
  },
];

const TRIP_RULES: readonly Entry[] = [
  // Beside the rate rule by default; false turns it off.
  {
    option: 'consecutiveFailures',
    field: 'consecutiveFailures',
    check: numberIn({ min: 1, integer: true }, 'an integer >= 1, or false for no consecutive rule'),
    default: BREAKER_DEFAULTS.consecutiveFailures,
    literal: { value: false, becomes: undefined },
  },
  {
    option: 'failureRateThreshold',
    field: 'failureRateThreshold',
    check: RATIO,
    default: BREAKER_DEFAULTS.failureRateThreshold,
  },
  // The default never asks a small count window for more calls than it can hold.
  {
    option: 'minimumThroughput',
    field: 'minimumThroughput',
    check: AT_LEAST_ONE,
    derive: (fields) =>
      fields.windowSize === undefined
        ? BREAKER_DEFAULTS.minimumThroughput
        : Math.min(BREAKER_DEFAULTS.minimumThroughput, fields.windowSize),
  },
  {
    option: 'minimumThroughput',
    conflicts: (fields) =>
      fields.windowSize !== undefined && fields.minimumThroughput > fields.windowSize,
    message: (check, fields) =>
      breakerOptionMessages.throughputOverWindow(
        check.pathOf('minimumThroughput'),
        fields.minimumThroughput,
        check.pathOf('window.size'),
        fields.windowSize!,
      ),
  },
  { option: 'slowCallDurationMs', field: 'slowCallDurationMs', check: POSITIVE_DURATION },
  {
    option: 'slowCallRateThreshold',
    conflicts: (fields, given) =>
      given.slowCallRateThreshold !== undefined && fields.slowCallDurationMs === undefined,
    message: (check) =>
      breakerOptionMessages.slowRateWithoutDuration(
        check.pathOf('slowCallRateThreshold'),
        check.pathOf('slowCallDurationMs'),
      ),
  },
  {
    option: 'slowCallRateThreshold',
    field: 'slowCallRateThreshold',
    check: RATIO,
    derive: (fields) =>
      fields.slowCallDurationMs === undefined ? undefined : BREAKER_DEFAULTS.slowCallRateThreshold,
  },
];

const OPEN_RULES: readonly Entry[] = [
  // The default deadline applies unless turned off with false: a hang must count as a failure.
  {
    option: 'timeoutMs',
    field: 'timeoutMs',
    check: numberIn(
      { min: 0, minExclusive: true, max: MAX_TIMER_MS },
      `a positive number of milliseconds up to ${MAX_TIMER_MS}, or false for no deadline`,
    ),
    default: BREAKER_DEFAULTS.timeoutMs,
    literal: { value: false, becomes: undefined },
  },
  {
    option: 'openDurationMs',
    field: 'openDurationMs',
    check: ANY_DURATION,
    default: BREAKER_DEFAULTS.openDurationMs,
  },
  { option: 'backoff.multiplier', field: 'backoffMultiplier', check: FACTOR, default: 1 },
  { option: 'backoff.maxMs', field: 'backoffMaxMs', check: ANY_DURATION, default: Infinity },
  {
    option: 'backoff.maxMs',
    conflicts: (fields) => fields.backoffMaxMs < fields.openDurationMs,
    message: (check, fields) =>
      breakerOptionMessages.backoffCapBelowOpen(
        check.pathOf('backoff.maxMs'),
        fields.backoffMaxMs,
        check.pathOf('openDurationMs'),
        fields.openDurationMs,
      ),
  },
  { option: 'jitter', field: 'jitter', check: UNIT, default: BREAKER_DEFAULTS.jitter },
  {
    option: 'maxRetryAfterMs',
    field: 'maxRetryAfterMs',
    check: ANY_DURATION,
    default: BREAKER_DEFAULTS.maxRetryAfterMs,
  },
];

const HALF_OPEN_RULES: readonly Entry[] = [
  {
    option: 'halfOpen.maxProbes',
    field: 'maxProbes',
    check: AT_LEAST_ONE,
    default: BREAKER_DEFAULTS.maxProbes,
  },
  {
    option: 'halfOpen.maxConcurrent',
    field: 'maxConcurrentProbes',
    check: AT_LEAST_ONE,
    derive: (fields) => Math.min(BREAKER_DEFAULTS.maxConcurrentProbes, fields.maxProbes),
  },
  {
    option: 'halfOpen.maxConcurrent',
    conflicts: (fields) => fields.maxConcurrentProbes > fields.maxProbes,
    message: (check, fields) =>
      breakerOptionMessages.concurrentOverProbes(
        check.pathOf('halfOpen.maxConcurrent'),
        fields.maxConcurrentProbes,
        check.pathOf('halfOpen.maxProbes'),
        fields.maxProbes,
      ),
  },
  {
    option: 'halfOpen.successesToClose',
    field: 'successesToClose',
    check: AT_LEAST_ONE,
    derive: (fields) => fields.maxProbes,
  },
  {
    option: 'halfOpen.successesToClose',
    conflicts: (fields) => fields.successesToClose > fields.maxProbes,
    message: (check, fields) =>
      breakerOptionMessages.successesOverProbes(
        check.pathOf('halfOpen.successesToClose'),
        fields.successesToClose,
        check.pathOf('halfOpen.maxProbes'),
        fields.maxProbes,
      ),
  },
  {
    option: 'halfOpen.probeTimeoutMs',
    field: 'probeTimeoutMs',
    check: timerDuration(MAX_TIMER_MS),
    derive: (fields) => fields.timeoutMs,
  },
  // Derived from a sub-millisecond deadline, the default would be refused for an option nobody set.
  {
    option: 'halfOpen.maxWaitMs',
    field: 'probeMaxWaitMs',
    check: durationFrom(1),
    derive: (fields) => Math.max(1, fields.probeTimeoutMs ?? BREAKER_DEFAULTS.probeMaxWaitMs),
  },
  {
    option: 'overload.k',
    field: 'overloadK',
    check: numberIn({ min: 1, max: Number.MAX_VALUE }, 'a finite number >= 1 (or overload: false)'),
    derive: (_fields, given) => (given.overload === false ? 0 : BREAKER_DEFAULTS.overloadK),
  },
  { option: 'classify', field: 'classify', check: aFunction() },
  { option: 'classifyResult', field: 'classifyResult', check: aFunction() },
];

const FAMILY_RULES: readonly Entry[] = [
  {
    option: 'perKey.maxKeys',
    field: 'perKeyMaxKeys',
    check: AT_LEAST_ONE,
    default: BREAKER_DEFAULTS.maxKeys,
  },
  { option: 'perKey.idleMs', field: 'perKeyIdleMs', check: POSITIVE_DURATION },
  // Room for the bounded form of a long key: its two marks, its hash and some of its start.
  {
    option: 'perKey.maxKeyLength',
    field: 'perKeyMaxKeyLength',
    check: integerFrom(64),
    default: BREAKER_DEFAULTS.maxKeyLength,
  },
  {
    option: 'aggregate',
    conflicts: (_fields, given) => given.aggregate !== undefined && given.perKey === undefined,
    message: (check) => breakerOptionMessages.aggregateWithoutPerKey(check.pathOf('aggregate')),
  },
  {
    option: 'aggregate.openWhenOpenRatio',
    field: 'aggregateOpenWhenOpenRatio',
    check: RATIO,
    required: true,
  },
  {
    option: 'aggregate.minKeys',
    field: 'aggregateMinKeys',
    check: AT_LEAST_ONE,
    default: BREAKER_DEFAULTS.aggregateMinKeys,
  },
  // A number of replicas, or 'auto' (the store counts the replicas that report).
  {
    option: 'share.quorum',
    field: 'shareQuorum',
    check: numberIn({ min: 1, integer: true }, "an integer >= 1 or 'auto'"),
    default: BREAKER_DEFAULTS.shareQuorum,
    literal: { value: 'auto', becomes: 'auto' },
  },
];

/** @internal The breaker's table, compiled. */
export const BREAKER_TABLE = optionTable<BreakerFields, BreakerOptions>('', [
  ...WINDOW_RULES,
  ...TRIP_RULES,
  ...OPEN_RULES,
  ...HALF_OPEN_RULES,
  ...FAMILY_RULES,
  ...RECOVERY_RULES,
]);
