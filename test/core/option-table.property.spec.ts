/**
 * The tables of option rules (`lib/core/options/options-table.ts`, retry's) against
 * what docs/options.md documents, with fixed seeds:
 * - a valid option set resolves to what it gives, and every option it leaves
 *   out to its documented default (the table in docs/options.md, written out
 *   here as a model, not read from the code);
 * - every option of the table, given a value no option takes, is refused with
 *   a `BreakerConfigError` naming the breaker and that option, whatever the
 *   breaker is called.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BreakerConfigError } from '../../lib/core/errors/breaker.errors.js';
import { BREAKER_TABLE } from '../../lib/core/options/options-table.js';
import {
  breakerOptionChecker,
  resolveBreakerOptions,
} from '../../lib/core/options/resolve-options.js';
import { resolveRetryOptions } from '../../lib/core/retry/retry-options.js';

const SEED = 20_261_203;
const RUNS = 2_000;
type Options = Record<string, any>;

const fn = () => undefined;
const other = () => undefined;
const ratio = fc.double({ min: 0, max: 1, minExcluded: true, noNaN: true });
const unit = fc.double({ min: 0, max: 1, noNaN: true }).filter((n) => !Object.is(n, -0));
const ms = fc.integer({ min: 1, max: 1_000_000 });
const timerMs = fc.integer({ min: 1, max: 2_147_483_647 });

/** Valid values of every option, repaired below where two options constrain each other. */
const validOptions: fc.Arbitrary<Options> = fc
  .record(
    {
      window: fc.oneof(
        fc.record({ type: fc.constant('count'), size: fc.integer({ min: 1, max: 1_000 }) }),
        fc.record(
          {
            type: fc.constant('time'),
            durationMs: fc.integer({ min: 1_000, max: 1e6 }),
            buckets: fc.integer({ min: 1, max: 1_000 }),
          },
          { requiredKeys: ['type', 'durationMs'] },
        ),
      ),
      failureRateThreshold: ratio,
      minimumThroughput: fc.integer({ min: 1, max: 1_000 }),
      consecutiveFailures: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constant(false)),
      slowCallDurationMs: ms,
      slowCallRateThreshold: ratio,
      timeoutMs: fc.oneof(timerMs, fc.constant(false)),
      openDurationMs: fc.integer({ min: 0, max: 1e6 }),
      backoff: fc.record(
        { multiplier: fc.double({ min: 1, max: 100, noNaN: true }), maxMs: ms },
        { requiredKeys: [] },
      ),
      jitter: unit,
      maxRetryAfterMs: fc.integer({ min: 0, max: 1e7 }),
      halfOpen: fc.record(
        {
          maxProbes: fc.integer({ min: 1, max: 10 }),
          maxConcurrent: fc.integer({ min: 1, max: 10 }),
          successesToClose: fc.integer({ min: 1, max: 10 }),
          probeTimeoutMs: timerMs,
          maxWaitMs: ms,
        },
        { requiredKeys: [] },
      ),
      overload: fc.oneof(
        fc.constant(false),
        fc.record({ k: fc.double({ min: 1, max: 10, noNaN: true }) }, { requiredKeys: [] }),
      ),
      classify: fc.constant(fn),
      classifyResult: fc.constant(other),
      perKey: fc.record(
        { maxKeys: ms, idleMs: ms, maxKeyLength: fc.integer({ min: 64, max: 4_096 }) },
        { requiredKeys: [] },
      ),
      aggregate: fc.record(
        { openWhenOpenRatio: ratio, minKeys: fc.integer({ min: 1, max: 100 }) },
        { requiredKeys: ['openWhenOpenRatio'] },
      ),
      share: fc.oneof(
        fc.boolean(),
        fc.record(
          { quorum: fc.oneof(fc.integer({ min: 1, max: 9 }), fc.constant('auto')) },
          { requiredKeys: [] },
        ),
      ),
      bulkhead: fc.oneof(
        fc.record(
          {
            maxConcurrent: fc.integer({ min: 1, max: 100 }),
            maxQueue: fc.integer({ min: 0, max: 100 }),
            queueTimeoutMs: timerMs,
          },
          { requiredKeys: ['maxConcurrent'] },
        ),
        fc.record(
          {
            algorithm: fc.constantFrom('gradient', 'aimd'),
            initialLimit: fc.integer({ min: 1, max: 2_000 }),
            minLimit: fc.integer({ min: 1, max: 50 }),
            maxLimit: fc.integer({ min: 1, max: 2_000 }),
            maxQueue: fc.integer({ min: 0, max: 100 }),
            queueTimeoutMs: timerMs,
          },
          { requiredKeys: ['algorithm'] },
        ),
      ),
      rampUp: fc.record({ durationMs: ms, initialRatio: ratio }, { requiredKeys: ['durationMs'] }),
      healthCheck: fc.record(
        {
          fn: fc.constant(fn),
          intervalMs: ms,
          timeoutMs: ms,
          onSuccess: fc.constantFrom('half-open', 'closed'),
        },
        { requiredKeys: ['fn', 'intervalMs'] },
      ),
    },
    { requiredKeys: [] },
  )
  .map(repair);

/** Removes what a valid set cannot hold together (each pair is refused by its own test in breaker-options.spec.ts). */
function repair(options: Options): Options {
  const o = structuredCloneWithFunctions(options);
  if (o.window?.type === 'count' && o.minimumThroughput > o.window.size)
    o.minimumThroughput = o.window.size;
  if (o.window?.type === 'time' && o.window.durationMs < (o.window.buckets ?? 10))
    o.window.durationMs = o.window.buckets;
  if (o.window === undefined && o.minimumThroughput > 100) o.minimumThroughput = 100;
  if (o.slowCallDurationMs === undefined) delete o.slowCallRateThreshold;
  if (o.backoff?.maxMs !== undefined && o.backoff.maxMs < (o.openDurationMs ?? 10_000))
    o.backoff.maxMs = o.openDurationMs ?? 10_000;
  const probes = o.halfOpen?.maxProbes ?? 1;
  if (o.halfOpen?.maxConcurrent > probes) o.halfOpen.maxConcurrent = probes;
  if (o.halfOpen?.successesToClose > probes) o.halfOpen.successesToClose = probes;
  if (o.perKey === undefined) delete o.aggregate;
  const deadline = o.timeoutMs === false ? undefined : (o.timeoutMs ?? 2_000);
  if (o.bulkhead?.queueTimeoutMs !== undefined && deadline !== undefined)
    o.bulkhead.queueTimeoutMs = Math.min(o.bulkhead.queueTimeoutMs, deadline);
  const limits = o.bulkhead;
  if (limits?.algorithm !== undefined) {
    if ((limits.maxLimit ?? 1_000) < (limits.minLimit ?? 1)) limits.maxLimit = limits.minLimit ?? 1;
    const [min, max] = [limits.minLimit ?? 1, limits.maxLimit ?? 1_000];
    if (limits.initialLimit !== undefined)
      limits.initialLimit = Math.min(max, Math.max(min, limits.initialLimit));
  }
  if (o.healthCheck?.timeoutMs > o.healthCheck?.intervalMs)
    o.healthCheck.timeoutMs = o.healthCheck.intervalMs;
  return o;
}

function structuredCloneWithFunctions(value: Options): Options {
  const copy: Options = {};
  for (const [key, item] of Object.entries(value))
    copy[key] =
      typeof item === 'object' && item !== null && !Array.isArray(item) ? { ...item } : item;
  return copy;
}

/** docs/options.md, "Breaker options and defaults", as a function of the options given. */
function documented(o: Options) {
  const window =
    o.window === undefined
      ? { type: 'count', size: 100 }
      : o.window.type === 'count'
        ? { type: 'count', size: o.window.size }
        : { type: 'time', durationMs: o.window.durationMs, buckets: o.window.buckets ?? 10 };
  const timeoutMs = o.timeoutMs === false ? undefined : (o.timeoutMs ?? 2_000);
  const maxProbes = o.halfOpen?.maxProbes ?? 1;
  const probeTimeoutMs = o.halfOpen?.probeTimeoutMs ?? timeoutMs;
  const given = (value: unknown, fallback: unknown) => (value === undefined ? fallback : value);
  const queue = o.bulkhead && {
    maxQueue: o.bulkhead.maxQueue ?? 0,
    queueTimeoutMs: o.bulkhead.queueTimeoutMs ?? timeoutMs ?? 10_000,
  };
  const minLimit = o.bulkhead?.minLimit ?? 1;
  const maxLimit = o.bulkhead?.maxLimit ?? 1_000;
  const bulkhead =
    o.bulkhead &&
    (o.bulkhead.algorithm === undefined
      ? { maxConcurrent: o.bulkhead.maxConcurrent, ...queue }
      : {
          algorithm: o.bulkhead.algorithm,
          initialLimit: o.bulkhead.initialLimit ?? Math.min(maxLimit, Math.max(minLimit, 20)),
          minLimit,
          maxLimit,
          ...queue,
        });
  const rampUp = o.rampUp && {
    durationMs: o.rampUp.durationMs,
    initialRatio: o.rampUp.initialRatio ?? 0.1,
  };
  const healthCheck = o.healthCheck && {
    fn: o.healthCheck.fn,
    intervalMs: o.healthCheck.intervalMs,
    timeoutMs: o.healthCheck.timeoutMs ?? o.healthCheck.intervalMs,
    onSuccess: o.healthCheck.onSuccess ?? 'half-open',
  };
  return {
    window,
    // A consecutive-failures rule given alone turns the rate rule off, unless a rate option is given too.
    rateRule:
      typeof o.consecutiveFailures !== 'number' ||
      o.window !== undefined ||
      o.failureRateThreshold !== undefined ||
      o.minimumThroughput !== undefined,
    failureRateThreshold: o.failureRateThreshold ?? 0.5,
    minimumThroughput:
      o.minimumThroughput ?? (window.type === 'count' ? Math.min(20, window.size!) : 20),
    consecutiveFailures:
      o.consecutiveFailures === false ? undefined : (o.consecutiveFailures ?? 10),
    slowCallDurationMs: o.slowCallDurationMs,
    slowCallRateThreshold:
      o.slowCallDurationMs === undefined ? undefined : (o.slowCallRateThreshold ?? 1),
    timeoutMs,
    openDurationMs: o.openDurationMs ?? 10_000,
    backoffMultiplier: o.backoff?.multiplier ?? 1,
    backoffMaxMs: o.backoff?.maxMs ?? Infinity,
    jitter: o.jitter ?? 0,
    maxRetryAfterMs: o.maxRetryAfterMs ?? 300_000,
    maxProbes,
    maxConcurrentProbes: o.halfOpen?.maxConcurrent ?? 1,
    successesToClose: o.halfOpen?.successesToClose ?? maxProbes,
    probeTimeoutMs,
    probeMaxWaitMs: o.halfOpen?.maxWaitMs ?? Math.max(1, probeTimeoutMs ?? 60_000),
    overloadK: o.overload === false ? 0 : (o.overload?.k ?? 2),
    classify: o.classify,
    classifyResult: o.classifyResult,
    perKey: o.perKey && {
      maxKeys: o.perKey.maxKeys ?? 1_000,
      idleMs: o.perKey.idleMs,
      maxKeyLength: o.perKey.maxKeyLength ?? 256,
    },
    aggregate: o.aggregate && {
      openWhenOpenRatio: o.aggregate.openWhenOpenRatio,
      minKeys: o.aggregate.minKeys ?? 2,
    },
    share:
      o.share === true
        ? { quorum: 'auto' }
        : typeof o.share === 'object'
          ? { quorum: given(o.share.quorum, 'auto') as number | 'auto' }
          : o.share,
    bulkhead,
    rampUp,
    healthCheck,
  };
}

/** What each option needs around it to be read at all: its object's required keys, the options it depends on. */
const CONTEXT: Record<string, Options> = {
  slowCallRateThreshold: { slowCallDurationMs: 100 },
  'window.size': { window: { type: 'count' } },
  'window.buckets': { window: { type: 'time', durationMs: 60_000 } },
  'window.durationMs': { window: { type: 'time' } },
  'aggregate.openWhenOpenRatio': { perKey: {}, aggregate: {} },
  'aggregate.minKeys': { perKey: {}, aggregate: { openWhenOpenRatio: 0.5 } },
  'share.quorum': { share: {} },
  'bulkhead.maxQueue': { bulkhead: { maxConcurrent: 1 } },
  'bulkhead.queueTimeoutMs': { bulkhead: { maxConcurrent: 1 } },
  'bulkhead.minLimit': { bulkhead: { algorithm: 'aimd' } },
  'bulkhead.maxLimit': { bulkhead: { algorithm: 'aimd' } },
  'bulkhead.initialLimit': { bulkhead: { algorithm: 'aimd' } },
  'rampUp.initialRatio': { rampUp: { durationMs: 1_000 } },
  'healthCheck.intervalMs': { healthCheck: { fn } },
  'healthCheck.timeoutMs': { healthCheck: { fn, intervalMs: 1_000 } },
  'healthCheck.onSuccess': { healthCheck: { fn, intervalMs: 1_000 } },
};

/** Values no option takes (false is `timeoutMs`'s "no deadline", so it is not among them). */
const refusedByAll = fc.oneof(
  fc.constantFrom(null, Number.NaN, 'nonsense', '', true, [], {}, new Date(0), 10n),
  fc
    .string({ minLength: 1 })
    .filter((s) => !['half-open', 'closed', 'auto', 'gradient', 'aimd'].includes(s)),
  fc.constant(Symbol('option')),
);

function withValue(path: string, value: unknown): Options {
  const options = structuredCloneWithFunctions(CONTEXT[path] ?? {});
  const [section, key] = path.split('.');
  if (key === undefined) options[section!] = value;
  else options[section!] = { ...options[section!], [key]: value };
  return options;
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('the table of breaker options', () => {
  const paths = BREAKER_TABLE.entries
    .filter((entry) => entry.slot !== -1 && entry.shape === undefined)
    .map((entry) => entry.path);

  it('has one rule per documented option', () => {
    expect(paths).toEqual([
      'window.size',
      'window.buckets',
      'window.durationMs',
      'consecutiveFailures',
      'failureRateThreshold',
      'minimumThroughput',
      'slowCallDurationMs',
      'slowCallRateThreshold',
      'timeoutMs',
      'openDurationMs',
      'backoff.multiplier',
      'backoff.maxMs',
      'jitter',
      'maxRetryAfterMs',
      'halfOpen.maxProbes',
      'halfOpen.maxConcurrent',
      'halfOpen.successesToClose',
      'halfOpen.probeTimeoutMs',
      'halfOpen.maxWaitMs',
      'overload.k',
      'classify',
      'classifyResult',
      'perKey.maxKeys',
      'perKey.idleMs',
      'perKey.maxKeyLength',
      'aggregate.openWhenOpenRatio',
      'aggregate.minKeys',
      'share.quorum',
      'bulkhead.algorithm',
      'bulkhead.maxConcurrent',
      'bulkhead.minLimit',
      'bulkhead.maxLimit',
      'bulkhead.initialLimit',
      'bulkhead.maxQueue',
      'bulkhead.queueTimeoutMs',
      'rampUp.durationMs',
      'rampUp.initialRatio',
      'healthCheck.fn',
      'healthCheck.intervalMs',
      'healthCheck.timeoutMs',
      'healthCheck.onSuccess',
    ]);
  });

  it(`resolves ${RUNS} valid option sets to what they give and the documented defaults`, () => {
    expect(resolveBreakerOptions('defaults')).toEqual(documented({}));
    fc.assert(
      fc.property(validOptions, (options) => {
        expect(resolveBreakerOptions('valid', options)).toEqual(documented(options));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it(`refuses a value no option takes, in every option, naming the breaker and the option`, () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...paths),
        refusedByAll,
        fc.string({ minLength: 1, maxLength: 20 }),
        (path, value, name) => {
          const error = thrown(() => resolveBreakerOptions(name, withValue(path, value)));
          expect(error).toBeInstanceOf(BreakerConfigError);
          expect(error).toMatchObject({ breakerName: name, option: path });
          expect((error as Error).message).toMatch(
            new RegExp(`^Circuit breaker "${escape(name)}": option "${escape(path)}" must be `),
          );
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('refuses a required option left out, naming it', () => {
    for (const path of [
      'aggregate.openWhenOpenRatio',
      'bulkhead.maxConcurrent',
      'rampUp.durationMs',
      'healthCheck.fn',
      'healthCheck.intervalMs',
      'window.size',
      'window.durationMs',
    ]) {
      const options = withValue(path, undefined);
      expect(() => resolveBreakerOptions('needs', options), path).toThrow(
        expect.objectContaining({ option: path, breakerName: 'needs' }),
      );
    }
  });
});

const RETRY_PATHS = [
  'attempts',
  'backoff.initialMs',
  'backoff.maxMs',
  'backoff.multiplier',
  'backoff.jitter',
  'budget.ratio',
  'budget.minPerSecond',
  'maxRetryAfterMs',
];

describe('the table of retry options', () => {
  it(`resolves valid policies to what they give and the documented defaults`, () => {
    const policy = fc.record(
      {
        attempts: fc.integer({ min: 1, max: 10 }),
        backoff: fc.record(
          {
            initialMs: fc.integer({ min: 0, max: 5_000 }),
            multiplier: fc.double({ min: 1, max: 1_000, noNaN: true }),
            maxMs: fc.integer({ min: 5_000, max: 2_147_483_647 }),
            jitter: unit,
          },
          { requiredKeys: [] },
        ),
        budget: fc.oneof(
          fc.constant(false),
          fc.record(
            { ratio: unit, minPerSecond: fc.double({ min: 0, max: 1e6, noNaN: true }) },
            { requiredKeys: [] },
          ),
        ),
        maxRetryAfterMs: fc.integer({ min: 0, max: 2_147_483_647 }),
      },
      { requiredKeys: ['attempts'] },
    );
    fc.assert(
      fc.property(policy, (p: Options) => {
        const initialMs = p.backoff?.initialMs ?? 100;
        expect(resolveRetryOptions(breakerOptionChecker('svc'), p)).toEqual({
          attempts: p.attempts,
          initialMs,
          multiplier: p.backoff?.multiplier ?? 2,
          maxMs: p.backoff?.maxMs ?? Math.max(5_000, initialMs),
          jitter: p.backoff?.jitter ?? 0.5,
          budget:
            p.budget === false
              ? undefined
              : { ratio: p.budget?.ratio ?? 0.1, minPerSecond: p.budget?.minPerSecond ?? 1 },
          maxRetryAfterMs: p.maxRetryAfterMs ?? 30_000,
        });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('refuses a value no option takes, in every option, naming the breaker and retry.<option>', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RETRY_PATHS),
        refusedByAll,
        fc.string({ minLength: 1, maxLength: 20 }),
        (path, value, name) => {
          const policy = path === 'attempts' ? {} : { attempts: 2 };
          const error = thrown(() =>
            resolveRetryOptions(breakerOptionChecker(name), { ...policy, ...nested(path, value) }),
          );
          expect(error).toBeInstanceOf(BreakerConfigError);
          expect(error).toMatchObject({ breakerName: name, option: `retry.${path}` });
          expect((error as Error).message).toMatch(
            new RegExp(
              `^Circuit breaker "${escape(name)}": option "retry\\.${escape(path)}" must be `,
            ),
          );
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

function nested(path: string, value: unknown): Options {
  const [section, key] = path.split('.');
  return key === undefined ? { [section!]: value } : { [section!]: { [key]: value } };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
