import { BREAKER_DEFAULTS, type BreakerOptions, type ShareOptions, type WindowOptions } from './breaker-options.js';
import { BreakerConfigError } from './breaker.errors.js';
import { breakerMessages } from './breaker.messages.js';
import type { ErrorClassifier, ResultClassifier } from './classify.js';

/** The options of one breaker after defaults and validation. @internal */
export interface ResolvedBreakerOptions {
  readonly window: Readonly<Required<WindowOptions>>;
  /** Whether the failure/slow rates may trip the breaker (false in the consecutive-only model). */
  readonly rateRule: boolean;
  readonly failureRateThreshold: number;
  readonly minimumThroughput: number;
  readonly consecutiveFailures: number | undefined;
  readonly slowCallDurationMs: number | undefined;
  readonly slowCallRateThreshold: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly openDurationMs: number;
  readonly backoffMultiplier: number;
  readonly backoffMaxMs: number;
  readonly jitter: number;
  readonly maxRetryAfterMs: number;
  readonly maxProbes: number;
  readonly maxConcurrentProbes: number;
  readonly successesToClose: number;
  readonly probeTimeoutMs: number | undefined;
  readonly probeMaxWaitMs: number;
  /** The SRE K, or 0 when overload handling is off. */
  readonly overloadK: number;
  readonly classify: ErrorClassifier | undefined;
  readonly classifyResult: ResultClassifier | undefined;
  /** Set when the breaker is a per-key family. */
  readonly perKey: { readonly maxKeys: number; readonly idleMs: number | undefined; readonly maxKeyLength: number } | undefined;
  readonly aggregate: { readonly openWhenOpenRatio: number; readonly minKeys: number } | undefined;
  /** `false`: never shared; `undefined`: shared when the module has a store; otherwise shared with this quorum. */
  readonly share: false | { readonly quorum: number } | undefined;
}

const TOP_LEVEL_KEYS = [
  'window',
  'failureRateThreshold',
  'minimumThroughput',
  'consecutiveFailures',
  'slowCallDurationMs',
  'slowCallRateThreshold',
  'timeoutMs',
  'openDurationMs',
  'backoff',
  'jitter',
  'maxRetryAfterMs',
  'halfOpen',
  'overload',
  'classify',
  'classifyResult',
  'perKey',
  'aggregate',
  'share',
] as const satisfies readonly (keyof BreakerOptions)[];
const HALF_OPEN_KEYS = ['maxProbes', 'maxConcurrent', 'successesToClose', 'probeTimeoutMs', 'maxWaitMs'] as const;
const BACKOFF_KEYS = ['multiplier', 'maxMs'] as const;
// setTimeout fires at once for anything longer, which would turn a deadline into none.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Applies the defaults and checks every option, throwing `BreakerConfigError`
 * that names the breaker, the option, the value and the allowed range.
 *
 * @internal
 */
export function resolveBreakerOptions(name: string, options: BreakerOptions = {}): ResolvedBreakerOptions {
  const check = new OptionChecker(name);
  check.object('options', options, TOP_LEVEL_KEYS);

  const window = check.window(options.window);
  const rateRuleExplicit =
    options.window !== undefined || options.failureRateThreshold !== undefined || options.minimumThroughput !== undefined;
  const consecutiveFailures = check.optionalInteger('consecutiveFailures', options.consecutiveFailures, 1);
  const failureRateThreshold = check.ratio('failureRateThreshold', options.failureRateThreshold ?? BREAKER_DEFAULTS.failureRateThreshold);
  // The default never asks a small count window for more calls than it can hold.
  const defaultThroughput = window.type === 'count' ? Math.min(BREAKER_DEFAULTS.minimumThroughput, window.size) : BREAKER_DEFAULTS.minimumThroughput;
  const minimumThroughput = check.integer('minimumThroughput', options.minimumThroughput ?? defaultThroughput, 1);
  if (window.type === 'count' && minimumThroughput > window.size) {
    check.fail(
      'minimumThroughput',
      `option "minimumThroughput" (${minimumThroughput}) cannot exceed window.size (${window.size}): the window could never hold enough calls to judge a rate.`,
    );
  }

  const slowCallDurationMs = check.optionalDuration('slowCallDurationMs', options.slowCallDurationMs);
  let slowCallRateThreshold: number | undefined;
  if (options.slowCallRateThreshold !== undefined) {
    if (slowCallDurationMs === undefined) {
      check.fail('slowCallRateThreshold', 'option "slowCallRateThreshold" needs "slowCallDurationMs": without it no call is ever slow.');
    }
    slowCallRateThreshold = check.ratio('slowCallRateThreshold', options.slowCallRateThreshold);
  } else if (slowCallDurationMs !== undefined) {
    slowCallRateThreshold = BREAKER_DEFAULTS.slowCallRateThreshold;
  }

  const timeoutMs = check.optionalDuration('timeoutMs', options.timeoutMs, MAX_TIMER_MS);
  const openDurationMs = check.duration('openDurationMs', options.openDurationMs ?? BREAKER_DEFAULTS.openDurationMs, 0);

  const backoff = options.backoff ?? {};
  check.object('backoff', backoff, BACKOFF_KEYS);
  const backoffMultiplier = check.number('backoff.multiplier', backoff.multiplier ?? 1, 1, Infinity, 'a finite number >= 1');
  const backoffMaxMs = backoff.maxMs === undefined ? Infinity : check.duration('backoff.maxMs', backoff.maxMs, 0);
  if (backoffMaxMs < openDurationMs) {
    check.fail('backoff.maxMs', `option "backoff.maxMs" (${backoffMaxMs}) is below "openDurationMs" (${openDurationMs}): the cap would shorten the first open period.`);
  }

  const jitter = check.number('jitter', options.jitter ?? BREAKER_DEFAULTS.jitter, 0, 1, 'a number in [0, 1]');
  const maxRetryAfterMs = check.duration('maxRetryAfterMs', options.maxRetryAfterMs ?? BREAKER_DEFAULTS.maxRetryAfterMs, 0);

  const halfOpen = options.halfOpen ?? {};
  check.object('halfOpen', halfOpen, HALF_OPEN_KEYS);
  const maxProbes = check.integer('halfOpen.maxProbes', halfOpen.maxProbes ?? BREAKER_DEFAULTS.maxProbes, 1);
  const maxConcurrentProbes = check.integer('halfOpen.maxConcurrent', halfOpen.maxConcurrent ?? Math.min(BREAKER_DEFAULTS.maxConcurrentProbes, maxProbes), 1);
  if (maxConcurrentProbes > maxProbes) {
    check.fail('halfOpen.maxConcurrent', `option "halfOpen.maxConcurrent" (${maxConcurrentProbes}) cannot exceed "halfOpen.maxProbes" (${maxProbes}).`);
  }
  const successesToClose = check.integer('halfOpen.successesToClose', halfOpen.successesToClose ?? maxProbes, 1);
  if (successesToClose > maxProbes) {
    check.fail(
      'halfOpen.successesToClose',
      `option "halfOpen.successesToClose" (${successesToClose}) cannot exceed "halfOpen.maxProbes" (${maxProbes}): the breaker could never close.`,
    );
  }
  const probeTimeoutMs = check.optionalDuration('halfOpen.probeTimeoutMs', halfOpen.probeTimeoutMs, MAX_TIMER_MS) ?? timeoutMs;
  const probeMaxWaitMs = check.duration('halfOpen.maxWaitMs', halfOpen.maxWaitMs ?? probeTimeoutMs ?? BREAKER_DEFAULTS.probeMaxWaitMs, 1);

  let overloadK = 0;
  if (options.overload !== false) {
    const overload = options.overload ?? {};
    check.object('overload', overload, ['k']);
    overloadK = check.number('overload.k', overload.k ?? BREAKER_DEFAULTS.overloadK, 1, Infinity, 'a finite number >= 1 (or overload: false)');
  }

  const classify = check.optionalFunction('classify', options.classify);
  const classifyResult = check.optionalFunction('classifyResult', options.classifyResult);

  let perKey: ResolvedBreakerOptions['perKey'];
  if (options.perKey !== undefined) {
    check.object('perKey', options.perKey, ['maxKeys', 'idleMs', 'maxKeyLength']);
    perKey = Object.freeze({
      maxKeys: check.integer('perKey.maxKeys', options.perKey.maxKeys ?? BREAKER_DEFAULTS.maxKeys, 1),
      idleMs: check.optionalDuration('perKey.idleMs', options.perKey.idleMs),
      // Room for the bounded form of a long key: its two marks, its hash and some of its start.
      maxKeyLength: check.integer('perKey.maxKeyLength', options.perKey.maxKeyLength ?? BREAKER_DEFAULTS.maxKeyLength, 64),
    });
  }
  let aggregate: ResolvedBreakerOptions['aggregate'];
  if (options.aggregate !== undefined) {
    if (perKey === undefined) check.fail('aggregate', 'option "aggregate" needs "perKey": only a per-key family has targets to aggregate.');
    check.object('aggregate', options.aggregate, ['openWhenOpenRatio', 'minKeys']);
    aggregate = Object.freeze({
      openWhenOpenRatio: check.ratio('aggregate.openWhenOpenRatio', options.aggregate.openWhenOpenRatio),
      minKeys: check.integer('aggregate.minKeys', options.aggregate.minKeys ?? BREAKER_DEFAULTS.aggregateMinKeys, 1),
    });
  }

  const share = check.share(options.share);

  return Object.freeze({
    window,
    rateRule: consecutiveFailures === undefined || rateRuleExplicit,
    failureRateThreshold,
    minimumThroughput,
    consecutiveFailures,
    slowCallDurationMs,
    slowCallRateThreshold,
    timeoutMs,
    openDurationMs,
    backoffMultiplier,
    backoffMaxMs,
    jitter,
    maxRetryAfterMs,
    maxProbes,
    maxConcurrentProbes,
    successesToClose,
    probeTimeoutMs,
    probeMaxWaitMs,
    overloadK,
    classify,
    classifyResult,
    perKey,
    aggregate,
    share,
  });
}

class OptionChecker {
  constructor(private readonly breaker: string) {}

  fail(option: string, detail: string): never {
    throw new BreakerConfigError(breakerMessages.conflictingOptions(this.breaker, detail), this.breaker, option);
  }

  invalid(option: string, value: unknown, expected: string): never {
    throw new BreakerConfigError(breakerMessages.invalidOption(this.breaker, option, value, expected), this.breaker, option);
  }

  object(option: string, value: unknown, known: readonly string[]): void {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.invalid(option, value, 'an object');
    const prefix = option === 'options' ? '' : `${option}.`;
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) {
        throw new BreakerConfigError(
          breakerMessages.unknownOption(this.breaker, prefix + key, known.map((k) => prefix + k)),
          this.breaker,
          prefix + key,
        );
      }
    }
  }

  number(option: string, value: unknown, min: number, max: number, expected: string): number {
    if (typeof value !== 'number' || Number.isNaN(value) || value < min || value > max || (max === Infinity && !Number.isFinite(value))) {
      this.invalid(option, value, expected);
    }
    return value;
  }

  ratio(option: string, value: unknown): number {
    if (typeof value !== 'number' || !(value > 0 && value <= 1)) this.invalid(option, value, 'a number in (0, 1]');
    return value;
  }

  integer(option: string, value: unknown, min: number): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) this.invalid(option, value, `an integer >= ${min}`);
    return value;
  }

  optionalInteger(option: string, value: unknown, min: number): number | undefined {
    return value === undefined ? undefined : this.integer(option, value, min);
  }

  duration(option: string, value: unknown, min: number): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min) this.invalid(option, value, `a finite number of milliseconds >= ${min}`);
    return value;
  }

  /** A positive duration or nothing; `max` keeps it within what a timer can wait. */
  optionalDuration(option: string, value: unknown, max = Number.MAX_SAFE_INTEGER): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !(value > 0 && value <= max)) {
      this.invalid(option, value, max === MAX_TIMER_MS ? `a positive number of milliseconds up to ${MAX_TIMER_MS}` : 'a positive, finite number of milliseconds');
    }
    return value;
  }

  optionalFunction<F>(option: string, value: F | undefined): F | undefined {
    if (value !== undefined && typeof value !== 'function') this.invalid(option, value, 'a function');
    return value;
  }

  share(value: boolean | ShareOptions | undefined): ResolvedBreakerOptions['share'] {
    if (value === undefined || value === false) return value;
    if (value === true) return Object.freeze({ quorum: BREAKER_DEFAULTS.shareQuorum });
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.invalid('share', value, 'true, false or { quorum }');
    this.object('share', value, ['quorum']);
    return Object.freeze({ quorum: this.integer('share.quorum', value.quorum ?? BREAKER_DEFAULTS.shareQuorum, 1) });
  }

  window(value: WindowOptions | undefined): Readonly<Required<WindowOptions>> {
    if (value === undefined) return Object.freeze({ type: 'count', size: BREAKER_DEFAULTS.windowSize });
    if (typeof value !== 'object' || value === null) this.invalid('window', value, `{ type: 'count', size } or { type: 'time', durationMs, buckets? }`);
    if (value.type === 'count') {
      this.object('window', value, ['type', 'size']);
      // A byte per slot: a million slots is already far past any useful window.
      const size = this.number('window.size', value.size, 1, 1_000_000, 'an integer in [1, 1000000]');
      if (!Number.isInteger(size)) this.invalid('window.size', size, 'an integer in [1, 1000000]');
      return Object.freeze({ type: 'count', size });
    }
    if (value.type === 'time') {
      this.object('window', value, ['type', 'durationMs', 'buckets']);
      const buckets = value.buckets ?? BREAKER_DEFAULTS.timeWindowBuckets;
      if (typeof buckets !== 'number' || !Number.isInteger(buckets) || buckets < 1 || buckets > 1000) {
        this.invalid('window.buckets', buckets, 'an integer in [1, 1000]');
      }
      const durationMs = this.duration('window.durationMs', value.durationMs, buckets);
      return Object.freeze({ type: 'time', durationMs, buckets });
    }
    return this.invalid('window.type', (value as { type?: unknown }).type, `'count' or 'time'`);
  }
}
