import { BREAKER_DEFAULTS, type BreakerOptions, type WindowOptions } from './breaker-options.js';
import { BreakerConfigError } from './breaker.errors.js';
import type { ErrorClassifier, ResultClassifier } from './classify.js';
import { breakerOptionMessages } from './breaker-options.messages.js';
import { OptionChecker } from './option-checker.js';
import {
  duration,
  integer,
  MAX_TIMER_MS,
  optionalDuration,
  or,
  quorumOf,
  ratio,
  resolveWindow,
} from './option-values.js';
import type { ResolvedBreakerOptions } from './resolved-breaker-options.interface.js';
import { copyRecoveryOptions, RECOVERY_KEYS, resolveRecoveryOptions } from './recovery-options.js';

export type { ResolvedBreakerOptions } from './resolved-breaker-options.interface.js';

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
  ...RECOVERY_KEYS,
] as const satisfies readonly (keyof BreakerOptions)[];
/** Every key a breaker's options may have, for layers that mix them with their own (the decorator). @internal */
export const BREAKER_OPTION_KEYS: readonly string[] = TOP_LEVEL_KEYS;
const HALF_OPEN_KEYS = [
  'maxProbes',
  'maxConcurrent',
  'successesToClose',
  'probeTimeoutMs',
  'maxWaitMs',
] as const;
const BACKOFF_KEYS = ['multiplier', 'maxMs'] as const;
const WINDOW_EXPECTED = `{ type: 'count', size } or { type: 'time', durationMs, buckets? }`;

/** Who a breaker's options are reported as, and where the user wrote them. @internal */
export interface BreakerOptionsSource {
  /** How messages name the breaker. Default `Circuit breaker "<name>"`. */
  readonly subject?: string;
  /** The path of an option as the user wrote it (`breakers.payments.timeoutMs`). Default: the option itself. */
  readonly pathOf?: (option: string) => string;
}

/** The checker of one breaker's options: errors are `BreakerConfigError`s naming the breaker and the option. @internal */
export function breakerOptionChecker(
  name: string,
  source: BreakerOptionsSource = {},
): OptionChecker {
  return new OptionChecker(
    source.subject ?? `Circuit breaker "${name}"`,
    (message, option) => new BreakerConfigError(message, name, option),
    source.pathOf,
  );
}

/**
 * A breaker's options as plain data, after the checks of their shape (plain
 * objects, known keys, readable values): what layers that merge options
 * (module defaults) work on. Keys given as `undefined` are left out, so that
 * they mean "not given" wherever they are merged.
 *
 * @internal
 */
export function copyBreakerOptions(check: OptionChecker, options: unknown): BreakerOptions {
  const copy = check.record('', options, TOP_LEVEL_KEYS);
  if (copy.window !== undefined) copy.window = copyWindow(check, copy.window);
  for (const [key, known] of [
    ['backoff', BACKOFF_KEYS],
    ['halfOpen', HALF_OPEN_KEYS],
    ['perKey', ['maxKeys', 'idleMs', 'maxKeyLength']],
    ['aggregate', ['openWhenOpenRatio', 'minKeys']],
  ] as const) {
    if (copy[key] !== undefined) copy[key] = check.record(key, copy[key], known);
  }
  if (copy.overload !== undefined && copy.overload !== false)
    copy.overload = check.record('overload', copy.overload, ['k'], 'an object { k? } or false');
  if (copy.share !== undefined && typeof copy.share !== 'boolean')
    copy.share = check.record('share', copy.share, ['quorum'], 'true, false or { quorum }');
  copyRecoveryOptions(check, copy);
  return copy as BreakerOptions;
}

function copyWindow(check: OptionChecker, value: unknown): WindowOptions {
  if (!check.isPlainObject('window', value)) check.invalid('window', value, WINDOW_EXPECTED);
  const type = check.read(value, 'type', 'window.type');
  if (type === 'count')
    return check.record(
      'window',
      value,
      ['type', 'size'],
      WINDOW_EXPECTED,
    ) as unknown as WindowOptions;
  if (type === 'time')
    return check.record(
      'window',
      value,
      ['type', 'durationMs', 'buckets'],
      WINDOW_EXPECTED,
    ) as unknown as WindowOptions;
  return check.invalid('window.type', type, `'count' or 'time'`, false);
}

/**
 * Applies the defaults and checks every option, throwing `BreakerConfigError`
 * that names the breaker, the option, the value and the allowed range.
 *
 * @internal
 */
export function resolveBreakerOptions(
  name: string,
  given: unknown = {},
  source?: BreakerOptionsSource,
): ResolvedBreakerOptions {
  const check = breakerOptionChecker(name, source);
  const options = copyBreakerOptions(check, given);

  const window = resolveWindow(check, options.window);
  const rateRuleExplicit =
    options.window !== undefined ||
    options.failureRateThreshold !== undefined ||
    options.minimumThroughput !== undefined;
  const consecutiveFailures =
    options.consecutiveFailures === undefined
      ? undefined
      : integer(check, 'consecutiveFailures', options.consecutiveFailures, 1);
  const failureRateThreshold = ratio(
    check,
    'failureRateThreshold',
    or(options.failureRateThreshold, BREAKER_DEFAULTS.failureRateThreshold),
  );
  // The default never asks a small count window for more calls than it can hold.
  const defaultThroughput =
    window.type === 'count'
      ? Math.min(BREAKER_DEFAULTS.minimumThroughput, window.size)
      : BREAKER_DEFAULTS.minimumThroughput;
  const minimumThroughput = integer(
    check,
    'minimumThroughput',
    or(options.minimumThroughput, defaultThroughput),
    1,
  );
  if (window.type === 'count' && minimumThroughput > window.size) {
    check.fail(
      'minimumThroughput',
      breakerOptionMessages.throughputOverWindow(
        check.pathOf('minimumThroughput'),
        minimumThroughput,
        check.pathOf('window.size'),
        window.size,
      ),
    );
  }

  const slowCallDurationMs = optionalDuration(
    check,
    'slowCallDurationMs',
    options.slowCallDurationMs,
  );
  let slowCallRateThreshold: number | undefined;
  if (options.slowCallRateThreshold !== undefined) {
    if (slowCallDurationMs === undefined) {
      check.fail(
        'slowCallRateThreshold',
        breakerOptionMessages.slowRateWithoutDuration(
          check.pathOf('slowCallRateThreshold'),
          check.pathOf('slowCallDurationMs'),
        ),
      );
    }
    slowCallRateThreshold = ratio(check, 'slowCallRateThreshold', options.slowCallRateThreshold);
  } else if (slowCallDurationMs !== undefined) {
    slowCallRateThreshold = BREAKER_DEFAULTS.slowCallRateThreshold;
  }

  // The default deadline applies unless turned off with false: a hang must count as a failure.
  const timeoutMs =
    options.timeoutMs === false
      ? undefined
      : check.number(
          'timeoutMs',
          or(options.timeoutMs, BREAKER_DEFAULTS.timeoutMs),
          { min: 0, minExclusive: true, max: MAX_TIMER_MS },
          `a positive number of milliseconds up to ${MAX_TIMER_MS}, or false for no deadline`,
        );
  const openDurationMs = duration(
    check,
    'openDurationMs',
    or(options.openDurationMs, BREAKER_DEFAULTS.openDurationMs),
    0,
  );

  const backoff = or(options.backoff, {});
  const backoffMultiplier = check.number(
    'backoff.multiplier',
    or(backoff.multiplier, 1),
    { min: 1, max: Number.MAX_VALUE },
    'a finite number >= 1',
  );
  const backoffMaxMs =
    backoff.maxMs === undefined ? Infinity : duration(check, 'backoff.maxMs', backoff.maxMs, 0);
  if (backoffMaxMs < openDurationMs) {
    check.fail(
      'backoff.maxMs',
      breakerOptionMessages.backoffCapBelowOpen(
        check.pathOf('backoff.maxMs'),
        backoffMaxMs,
        check.pathOf('openDurationMs'),
        openDurationMs,
      ),
    );
  }

  const jitter = check.number(
    'jitter',
    or(options.jitter, BREAKER_DEFAULTS.jitter),
    { min: 0, max: 1 },
    'a number in [0, 1]',
  );
  const maxRetryAfterMs = duration(
    check,
    'maxRetryAfterMs',
    or(options.maxRetryAfterMs, BREAKER_DEFAULTS.maxRetryAfterMs),
    0,
  );

  const halfOpen = or(options.halfOpen, {});
  const maxProbes = integer(
    check,
    'halfOpen.maxProbes',
    or(halfOpen.maxProbes, BREAKER_DEFAULTS.maxProbes),
    1,
  );
  const maxConcurrentProbes = integer(
    check,
    'halfOpen.maxConcurrent',
    or(halfOpen.maxConcurrent, Math.min(BREAKER_DEFAULTS.maxConcurrentProbes, maxProbes)),
    1,
  );
  if (maxConcurrentProbes > maxProbes) {
    check.fail(
      'halfOpen.maxConcurrent',
      breakerOptionMessages.concurrentOverProbes(
        check.pathOf('halfOpen.maxConcurrent'),
        maxConcurrentProbes,
        check.pathOf('halfOpen.maxProbes'),
        maxProbes,
      ),
    );
  }
  const successesToClose = integer(
    check,
    'halfOpen.successesToClose',
    or(halfOpen.successesToClose, maxProbes),
    1,
  );
  if (successesToClose > maxProbes) {
    check.fail(
      'halfOpen.successesToClose',
      breakerOptionMessages.successesOverProbes(
        check.pathOf('halfOpen.successesToClose'),
        successesToClose,
        check.pathOf('halfOpen.maxProbes'),
        maxProbes,
      ),
    );
  }
  const probeTimeoutMs =
    optionalDuration(check, 'halfOpen.probeTimeoutMs', halfOpen.probeTimeoutMs, MAX_TIMER_MS) ??
    timeoutMs;
  // Derived from a sub-millisecond deadline, the default would be refused for an option nobody set.
  const probeMaxWaitMs =
    halfOpen.maxWaitMs === undefined
      ? Math.max(1, probeTimeoutMs ?? BREAKER_DEFAULTS.probeMaxWaitMs)
      : duration(check, 'halfOpen.maxWaitMs', halfOpen.maxWaitMs, 1);

  let overloadK = 0;
  if (options.overload !== false) {
    const overload = or(options.overload, {});
    overloadK = check.number(
      'overload.k',
      or(overload.k, BREAKER_DEFAULTS.overloadK),
      { min: 1, max: Number.MAX_VALUE },
      'a finite number >= 1 (or overload: false)',
    );
  }

  const classify =
    options.classify === undefined
      ? undefined
      : check.func<ErrorClassifier>('classify', options.classify);
  const classifyResult =
    options.classifyResult === undefined
      ? undefined
      : check.func<ResultClassifier>('classifyResult', options.classifyResult);

  let perKey: ResolvedBreakerOptions['perKey'];
  if (options.perKey !== undefined) {
    perKey = Object.freeze({
      maxKeys: integer(
        check,
        'perKey.maxKeys',
        or(options.perKey.maxKeys, BREAKER_DEFAULTS.maxKeys),
        1,
      ),
      idleMs: optionalDuration(check, 'perKey.idleMs', options.perKey.idleMs),
      // Room for the bounded form of a long key: its two marks, its hash and some of its start.
      maxKeyLength: integer(
        check,
        'perKey.maxKeyLength',
        or(options.perKey.maxKeyLength, BREAKER_DEFAULTS.maxKeyLength),
        64,
      ),
    });
  }
  let aggregate: ResolvedBreakerOptions['aggregate'];
  if (options.aggregate !== undefined) {
    if (perKey === undefined)
      check.fail(
        'aggregate',
        breakerOptionMessages.aggregateWithoutPerKey(check.pathOf('aggregate')),
      );
    aggregate = Object.freeze({
      openWhenOpenRatio: check.number(
        'aggregate.openWhenOpenRatio',
        options.aggregate.openWhenOpenRatio,
        { min: 0, minExclusive: true, max: 1 },
        'a number in (0, 1]',
        false,
      ),
      minKeys: integer(
        check,
        'aggregate.minKeys',
        or(options.aggregate.minKeys, BREAKER_DEFAULTS.aggregateMinKeys),
        1,
      ),
    });
  }

  let share: ResolvedBreakerOptions['share'];
  if (options.share === true) share = Object.freeze({ quorum: BREAKER_DEFAULTS.shareQuorum });
  else if (options.share === false || options.share === undefined) share = options.share;
  else
    share = Object.freeze({
      quorum: quorumOf(check, or(options.share.quorum, BREAKER_DEFAULTS.shareQuorum)),
    });

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
    ...resolveRecoveryOptions(check, options, timeoutMs),
  });
}
