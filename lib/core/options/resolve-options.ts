import { BREAKER_DEFAULTS, type BreakerOptions, type WindowOptions } from './breaker-options.js';
import { BreakerConfigError } from '../errors/breaker.errors.js';
import { OptionChecker } from './option-checker.js';
import { applyOptionRules } from './option-rules.js';
import { BREAKER_TABLE, type BreakerFields } from './options-table.js';
import type { ResolvedBreakerOptions } from './resolved-breaker-options.interface.js';
import {
  copyRecoveryOptions,
  RECOVERY_KEYS,
  recoveryOptionsOf,
} from '../recovery/recovery-options.js';

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
 * The objects of a breaker's options, in the order their shapes are checked:
 * the option, its known keys, what it must be, and the values taken as they
 * are (false turns overload handling off; a boolean share says whether to
 * share, with the default quorum).
 */
const SECTIONS: readonly (readonly [keyof BreakerOptions, readonly string[], string, unknown[]])[] =
  [
    ['backoff', BACKOFF_KEYS, 'an object', []],
    ['halfOpen', HALF_OPEN_KEYS, 'an object', []],
    ['perKey', ['maxKeys', 'idleMs', 'maxKeyLength'], 'an object', []],
    ['aggregate', ['openWhenOpenRatio', 'minKeys'], 'an object', []],
    ['overload', ['k'], 'an object { k? } or false', [false]],
    ['share', ['quorum'], 'true, false or { quorum }', [true, false]],
  ];

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
  for (const [key, known, expected, asIs] of SECTIONS) {
    const value = copy[key];
    if (value !== undefined && !asIs.includes(value))
      copy[key] = check.record(key, value, known, expected);
  }
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
  return resolveCopied(breakerOptionChecker(name, source), given).config;
}

/**
 * `resolveBreakerOptions()`, with the plain copy of the options it resolved
 * (what a cache compares a later options object with). @internal
 */
export function resolveCopied(
  check: OptionChecker,
  given: unknown = {},
): { copy: BreakerOptions; config: ResolvedBreakerOptions } {
  const copy = copyBreakerOptions(check, given);
  const fields = applyOptionRules(check, BREAKER_TABLE, copy);
  return { copy, config: assemble(fields, copy) };
}

/** The resolved options, from the fields the table resolved. */
function assemble(fields: BreakerFields, given: BreakerOptions): ResolvedBreakerOptions {
  const rateRuleExplicit =
    given.window !== undefined ||
    given.failureRateThreshold !== undefined ||
    given.minimumThroughput !== undefined;
  const recovery = recoveryOptionsOf(fields, given);
  return Object.freeze({
    window: Object.freeze(
      fields.windowSize === undefined
        ? { type: 'time', durationMs: fields.windowDurationMs, buckets: fields.windowBuckets }
        : { type: 'count', size: fields.windowSize },
    ) as ResolvedBreakerOptions['window'],
    // A streak the user gave alone is the only trip rule; the default streak sits beside the rate rule.
    rateRule: typeof given.consecutiveFailures !== 'number' || rateRuleExplicit,
    failureRateThreshold: fields.failureRateThreshold,
    minimumThroughput: fields.minimumThroughput,
    consecutiveFailures: fields.consecutiveFailures,
    slowCallDurationMs: fields.slowCallDurationMs,
    slowCallRateThreshold: fields.slowCallRateThreshold,
    timeoutMs: fields.timeoutMs,
    openDurationMs: fields.openDurationMs,
    backoffMultiplier: fields.backoffMultiplier,
    backoffMaxMs: fields.backoffMaxMs,
    jitter: fields.jitter,
    maxRetryAfterMs: fields.maxRetryAfterMs,
    maxProbes: fields.maxProbes,
    maxConcurrentProbes: fields.maxConcurrentProbes,
    successesToClose: fields.successesToClose,
    probeTimeoutMs: fields.probeTimeoutMs,
    probeMaxWaitMs: fields.probeMaxWaitMs,
    overloadK: fields.overloadK,
    classify: fields.classify,
    classifyResult: fields.classifyResult,
    perKey:
      given.perKey === undefined
        ? undefined
        : Object.freeze({
            maxKeys: fields.perKeyMaxKeys,
            idleMs: fields.perKeyIdleMs,
            maxKeyLength: fields.perKeyMaxKeyLength,
          }),
    aggregate:
      given.aggregate === undefined
        ? undefined
        : Object.freeze({
            openWhenOpenRatio: fields.aggregateOpenWhenOpenRatio,
            minKeys: fields.aggregateMinKeys,
          }),
    share: shareOf(given.share, fields.shareQuorum),
    guarded: recovery.guarded,
    bulkhead: recovery.bulkhead,
    rampUp: recovery.rampUp,
    healthCheck: recovery.healthCheck,
  });
}

function shareOf(
  share: BreakerOptions['share'],
  quorum: number | 'auto',
): ResolvedBreakerOptions['share'] {
  if (share === true) return Object.freeze({ quorum: BREAKER_DEFAULTS.shareQuorum });
  if (share === false || share === undefined) return share;
  return Object.freeze({ quorum });
}
