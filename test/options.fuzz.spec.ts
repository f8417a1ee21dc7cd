/**
 * Property-based fuzzing of every options surface of the package.
 *
 * Invariants, for each surface:
 * - every generated valid option set builds without error;
 * - every generated invalid one (one option made invalid: a wrong type, NaN,
 *   Infinity, a negative, huge or fractional number, a bigint, a symbol,
 *   null, an array, a Date, a Map, a class instance, a Proxy that throws, a
 *   throwing getter, or an unknown key) fails at construction or start-up,
 *   with a message that starts with the subject (the breaker or the module)
 *   and names the option by its path.
 *
 * The seed is fixed so that a failure reproduces; the run counts are the
 * constants below, and the suite prints what it ran.
 */
import { HealthIndicatorService } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { checkBreakerDefinition, validateModuleOptions } from '../lib/circuit-breaker.options.js';
import {
  Breaker,
  ConcurrencyLimiter,
  BreakerConfigError,
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  circuitBreaker,
  RequireCircuitBreaker,
  UseCircuitBreaker,
  withRetry,
  type BreakerOptions,
} from '../lib/index.js';
import { CircuitBreakerTelemetryModule } from '../lib/opentelemetry/index.js';
import { CircuitBreakerMetricsModule } from '../lib/prometheus/index.js';
import { RedisBreakerStore } from '../lib/redis/index.js';
import { CircuitBreakerHealthIndicator } from '../lib/terminus/index.js';

const SEED = 20_261_201;
/** Runs per surface and per kind (valid, invalid): in-process surfaces are cheap, Nest compilations are not. */
const RUNS = {
  breaker: 4_000,
  moduleOptions: 2_000,
  forFeature: 1_000,
  decorator: 1_000,
  operator: 1_000,
  admission: 1_000,
  redisStore: 1_000,
  metrics: 1_000,
  telemetry: 1_000,
  health: 1_000,
  nestCompilation: 24,
} as const;

const counts: Record<string, { valid: number; invalid: number }> = {};
const suiteStart = performance.now();
function count(surface: string, kind: 'valid' | 'invalid'): void {
  (counts[surface] ??= { valid: 0, invalid: 0 })[kind]++;
}
afterAll(() => {
  const lines = Object.entries(counts).map(
    ([surface, { valid, invalid }]) =>
      `  ${surface.padEnd(18)} ${String(valid).padStart(6)} valid ${String(invalid).padStart(6)} invalid`,
  );
  console.info(
    `Option fuzzing (seed ${SEED}, ${Math.round(performance.now() - suiteStart)} ms):\n${lines.join('\n')}`,
  );
});

// ---------------------------------------------------------------- values

// A revoked Proxy cannot be generated: fast-check itself probes generated values with `in`. The
// hostile-options spec covers it; here, Proxies whose traps throw stand in for it.
const throwingProxy = new Proxy(
  {},
  {
    get: () => {
      throw new Error('get trap');
    },
    ownKeys: () => {
      throw new Error('ownKeys trap');
    },
    getPrototypeOf: () => {
      throw new Error('getPrototypeOf trap');
    },
  },
);
const prototypeTrapProxy = new Proxy([], {
  getPrototypeOf: () => {
    throw new TypeError('getPrototypeOf trap');
  },
});
class Options {
  timeoutMs = 1_000;
}

/** Values that are no option of any kind here (no number, boolean, string, function or plain object). */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    Number.NaN,
    Infinity,
    -Infinity,
    throwingProxy,
    prototypeTrapProxy,
  ),
  fc.bigInt().map((n) => n),
  fc.string().map((s) => Symbol(s)),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.date({ noInvalidDate: true }),
  fc.constant(new Map([['timeoutMs', 1]])),
  fc.constant(new Set([1])),
  fc.constant(new Options()),
  fc.constant(Object.create({ inherited: 1 }) as object),
);
/** Anything that is not a number. */
const notANumber = fc.oneof(
  hostile,
  fc.string(),
  fc.boolean(),
  fc.constant({}),
  fc.constant(() => 1),
  fc.constant({ valueOf: () => 5 }),
);
const notABoolean = fc.oneof(
  hostile,
  fc.integer(),
  fc.constantFrom('true', 'false', ''),
  fc.constant({}),
);
const notAFunction = fc.oneof(hostile, fc.integer(), fc.string(), fc.boolean(), fc.constant({}));
const notAPlainObject = fc.oneof(
  hostile.filter((v) => v !== null || true),
  fc.integer(),
  fc.string(),
  fc.boolean(),
  fc.constant(() => ({})),
);
const aFunction = fc.constant((..._args: unknown[]) => undefined);

interface NumberRule {
  min: number;
  max: number;
  minExclusive?: boolean;
  integer?: boolean;
}
const MAX_TIMER = 2_147_483_647;
const R = {
  ratio: { min: 0, max: 1, minExclusive: true },
  unit: { min: 0, max: 1 },
  count: { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true },
  positiveMs: { min: 0, max: Number.MAX_SAFE_INTEGER, minExclusive: true },
  timerMs: { min: 0, max: MAX_TIMER, minExclusive: true },
  ms: { min: 0, max: Number.MAX_VALUE },
  factor: { min: 1, max: Number.MAX_VALUE },
} satisfies Record<string, NumberRule>;

function validNumber(rule: NumberRule): fc.Arbitrary<number> {
  if (rule.integer)
    return fc.oneof(
      fc.integer({ min: rule.min, max: Math.min(rule.max, rule.min + 1_000) }),
      fc.integer({ min: rule.min, max: Math.min(rule.max, 2 ** 31) }),
    );
  const small = fc.double({
    min: rule.min,
    max: Math.min(rule.max, 1e6),
    noNaN: true,
    noDefaultInfinity: true,
  });
  const any = fc.double({ min: rule.min, max: rule.max, noNaN: true, noDefaultInfinity: true });
  return fc
    .oneof(small, any)
    .filter((n) => !(rule.minExclusive && n <= rule.min) && !Object.is(n, -0));
}

function invalidNumber(rule: NumberRule): fc.Arbitrary<unknown> {
  // -0 is not below 0: `-0 >= 0` holds, so it is a valid zero.
  const below = (
    rule.minExclusive
      ? fc.double({ min: -1e12, max: rule.min, noNaN: true })
      : fc.double({ min: -1e12, max: rule.min, maxExcluded: true, noNaN: true })
  ).filter((n) => rule.minExclusive || !Object.is(n, -0));
  const choices: fc.Arbitrary<unknown>[] = [notANumber, below];
  if (rule.max < Number.MAX_VALUE)
    choices.push(
      fc.double({
        min: rule.max,
        max: 1e300,
        minExcluded: true,
        noNaN: true,
        noDefaultInfinity: true,
      }),
    );
  if (rule.integer)
    choices.push(
      fc.double({ min: rule.min, max: 1e6, noNaN: true }).filter((n) => !Number.isInteger(n)),
      fc.constant(2 ** 53 + 2),
    );
  return fc.oneof(...choices);
}

// ---------------------------------------------------------------- breaker options

type Spec = { valid: fc.Arbitrary<unknown>; invalid: fc.Arbitrary<unknown>; required?: boolean };
const num = (rule: NumberRule, required = false): Spec => ({
  valid: validNumber(rule),
  invalid: invalidNumber(rule),
  required,
});

/** Every leaf of a breaker's options, by path. Objects (halfOpen...) are covered by their leaves and by OBJECT_PATHS. */
const BREAKER_LEAVES: Record<string, Spec> = {
  failureRateThreshold: num(R.ratio),
  minimumThroughput: num(R.count),
  // false turns the default streak rule off: valid, and never one of the invalid values.
  consecutiveFailures: {
    valid: fc.oneof(validNumber(R.count), fc.constant(false)),
    invalid: invalidNumber(R.count).filter((v) => v !== false),
  },
  slowCallDurationMs: num(R.positiveMs),
  slowCallRateThreshold: num(R.ratio),
  // false turns the default deadline off: valid, and never one of the invalid values.
  timeoutMs: {
    valid: fc.oneof(validNumber(R.timerMs), fc.constant(false)),
    invalid: invalidNumber(R.timerMs).filter((v) => v !== false),
  },
  openDurationMs: num(R.ms),
  jitter: num(R.unit),
  maxRetryAfterMs: num(R.ms),
  classify: { valid: aFunction, invalid: notAFunction },
  classifyResult: { valid: aFunction, invalid: notAFunction },
  'backoff.multiplier': num(R.factor),
  'backoff.maxMs': num(R.ms),
  'halfOpen.maxProbes': num(R.count),
  'halfOpen.maxConcurrent': num(R.count),
  'halfOpen.successesToClose': num(R.count),
  'halfOpen.probeTimeoutMs': num(R.timerMs),
  'halfOpen.maxWaitMs': num({ min: 1, max: Number.MAX_VALUE }),
  'overload.k': num(R.factor),
  'perKey.maxKeys': num(R.count),
  'perKey.idleMs': num(R.positiveMs),
  'aggregate.openWhenOpenRatio': { ...num(R.ratio), required: true },
  'aggregate.minKeys': num(R.count),
  // 'auto' (the default) counts the replicas that report: valid, and never one of the invalid values.
  'share.quorum': {
    valid: fc.oneof(validNumber(R.count), fc.constant('auto')),
    invalid: invalidNumber(R.count).filter((v) => v !== 'auto'),
  },
  'bulkhead.maxConcurrent': num(R.count),
  'bulkhead.maxQueue': num({ min: 0, max: Number.MAX_SAFE_INTEGER, integer: true }),
  'bulkhead.queueTimeoutMs': num(R.timerMs),
  'rampUp.durationMs': num(R.positiveMs),
  'rampUp.initialRatio': num(R.ratio),
  'healthCheck.fn': { valid: aFunction, invalid: notAFunction },
  'healthCheck.intervalMs': num({ min: 1, max: MAX_TIMER }),
  'healthCheck.timeoutMs': num(R.timerMs),
  'healthCheck.onSuccess': {
    valid: fc.constantFrom('half-open', 'closed'),
    invalid: fc.oneof(hostile, fc.integer(), fc.constantFrom('open', 'closed ', '')),
  },
};
/** Of each recovery option, what its object cannot do without (a valid value, repaired in when left out). */
const RECOVERY_REQUIRED: Record<string, Record<string, unknown>> = {
  bulkhead: { maxConcurrent: 1 },
  rampUp: { durationMs: 1_000 },
  healthCheck: { fn: () => undefined, intervalMs: 1_000 },
};
const OBJECT_PATHS = [
  'bulkhead',
  'rampUp',
  'healthCheck',
  'backoff',
  'halfOpen',
  'overload',
  'perKey',
  'aggregate',
  'share',
  'window',
] as const;

/** Leaves present with a valid value, explicit `undefined` (not given) or absent. */
function leaves(
  specs: Record<string, Spec>,
  paths: readonly string[],
): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const path of paths)
    model[path] = specs[path]!.required
      ? specs[path]!.valid
      : fc.oneof(
          { weight: 6, arbitrary: specs[path]!.valid },
          { weight: 1, arbitrary: fc.constant(undefined) },
        );
  return fc.record(model, { requiredKeys: paths.filter((p) => specs[p]!.required) });
}

/** A deep copy of the plain objects of an option set: fast-check reuses generated values, which must not be mutated. */
function clone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const copy: Record<string, unknown> = proto === null ? Object.create(null) : {};
  for (const [key, item] of Object.entries(value)) copy[key] = clone(item);
  return copy as T;
}

function set(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = target;
  for (const key of keys.slice(0, -1)) {
    if (typeof at[key] !== 'object' || at[key] === null) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys.at(-1)!] = value;
}

function get(target: Record<string, unknown>, path: string): unknown {
  let at: unknown = target;
  for (const key of path.split('.'))
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  return at;
}

const windowArb: fc.Arbitrary<unknown> = fc.oneof(
  // Mostly small: a count window allocates its slots, and a million of them per run would dominate the suite.
  fc.record({
    type: fc.constant('count'),
    size: fc.oneof(
      { weight: 200, arbitrary: fc.integer({ min: 1, max: 1_000 }) },
      { weight: 1, arbitrary: fc.constantFrom(999_999, 1_000_000) },
    ),
  }),
  fc.record(
    {
      type: fc.constant('time'),
      durationMs: validNumber(R.ms),
      buckets: fc.integer({ min: 1, max: 1000 }),
    },
    { requiredKeys: ['type', 'durationMs'] },
  ),
);

interface BreakerSetShape {
  /** Module breakers may not share without a store; module defaults avoid options that constrain others. */
  share?: boolean;
  onlyIndependent?: boolean;
}
const INDEPENDENT = [
  'failureRateThreshold',
  'consecutiveFailures',
  'timeoutMs',
  'jitter',
  'maxRetryAfterMs',
  'classify',
  'classifyResult',
  'overload.k',
];

/** A valid breaker option set: random leaves, then the cross-option rules repaired. */
function validBreakerOptions(shape: BreakerSetShape = {}): fc.Arbitrary<Record<string, unknown>> {
  const paths = Object.keys(BREAKER_LEAVES).filter((p) =>
    shape.onlyIndependent
      ? INDEPENDENT.includes(p)
      : shape.share !== false || !p.startsWith('share'),
  );
  return fc
    .tuple(
      leaves(
        BREAKER_LEAVES,
        paths.filter((p) => !p.startsWith('aggregate')),
      ),
      shape.onlyIndependent
        ? fc.constant(undefined)
        : fc.option(leaves(BREAKER_LEAVES, ['aggregate.openWhenOpenRatio', 'aggregate.minKeys']), {
            nil: undefined,
          }),
      shape.onlyIndependent ? fc.constant(undefined) : fc.option(windowArb, { nil: undefined }),
      shape.onlyIndependent
        ? fc.constant(undefined)
        : fc.constantFrom<unknown>(undefined, false, {}),
      shape.onlyIndependent || shape.share === false
        ? fc.constant(undefined)
        : fc.constantFrom<unknown>(undefined, true, false),
    )
    .map(([flat, aggregate, window, overload, share]) => {
      const options: Record<string, unknown> = {};
      for (const [path, value] of Object.entries({ ...flat, ...aggregate }))
        set(options, path, value);
      if (window !== undefined) options.window = window;
      if (overload !== undefined && options.overload === undefined) options.overload = overload;
      if (share !== undefined && options.share === undefined) options.share = share;
      return repair(clone(options));
    });
}

/** Makes a set of individually valid options valid together, as the documented cross-option rules require. */
function repair(options: Record<string, unknown>): Record<string, unknown> {
  const window = options.window as
    { type: string; size?: number; durationMs?: number; buckets?: number } | undefined;
  if (window?.type !== 'time' && typeof options.minimumThroughput === 'number')
    options.minimumThroughput = Math.min(options.minimumThroughput, window?.size ?? 100);
  if (window?.type === 'time')
    window.durationMs = Math.max(window.durationMs!, window.buckets ?? 10);
  if (options.slowCallRateThreshold !== undefined && options.slowCallDurationMs === undefined)
    delete options.slowCallRateThreshold;
  const halfOpen = options.halfOpen as Record<string, number | undefined> | undefined;
  if (halfOpen !== undefined) {
    const probes = halfOpen.maxProbes ?? 1;
    if ((halfOpen.maxConcurrent ?? 0) > probes) halfOpen.maxConcurrent = probes;
    if ((halfOpen.successesToClose ?? 0) > probes) halfOpen.successesToClose = probes;
  }
  const backoff = options.backoff as Record<string, number | undefined> | undefined;
  const open = (options.openDurationMs as number | undefined) ?? 30_000;
  if (backoff?.maxMs !== undefined && backoff.maxMs < open) backoff.maxMs = open;
  if (options.aggregate !== undefined && options.perKey === undefined) options.perKey = {};
  for (const [key, required] of Object.entries(RECOVERY_REQUIRED)) {
    const given = options[key] as Record<string, unknown> | undefined;
    if (given === undefined) continue;
    for (const [leaf, value] of Object.entries(required)) given[leaf] ??= value;
  }
  // A queue wait within the call's deadline; a health check's deadline within its interval.
  const bulkhead = options.bulkhead as Record<string, number | undefined> | undefined;
  const deadline = typeof options.timeoutMs === 'number' ? options.timeoutMs : 2_000; // the default deadline
  if (bulkhead?.queueTimeoutMs !== undefined && options.timeoutMs !== false)
    bulkhead.queueTimeoutMs = Math.min(bulkhead.queueTimeoutMs, deadline);
  const healthCheck = options.healthCheck as Record<string, number | undefined> | undefined;
  if (healthCheck?.timeoutMs !== undefined)
    healthCheck.timeoutMs = Math.min(healthCheck.timeoutMs, healthCheck.intervalMs!);
  return options;
}

/** One way of making one option invalid: where, and the option path the error must name. */
interface Mutation {
  apply(options: Record<string, unknown>): void;
  /** The option path relative to the options object. */
  path: string;
}

const WINDOW_MUTATIONS: fc.Arbitrary<Mutation> = fc.oneof(
  notAPlainObject.map((value) => ({
    path: 'window',
    apply: (o: Record<string, unknown>) => void (o.window = value),
  })),
  fc
    .oneof(
      hostile,
      fc.string().filter((s) => s !== 'count' && s !== 'time'),
      fc.constant(undefined),
    )
    .map((type) => ({
      path: 'window.type',
      apply: (o: Record<string, unknown>) => void (o.window = { type, size: 10 }),
    })),
  fc
    .oneof(invalidNumber({ min: 1, max: 1_000_000, integer: true }), fc.constant(undefined))
    .map((size) => ({
      path: 'window.size',
      apply: (o: Record<string, unknown>) => void (o.window = { type: 'count', size }),
    })),
  fc
    .oneof(invalidNumber({ min: 10, max: Number.MAX_VALUE }), fc.constant(undefined))
    .map((durationMs) => ({
      path: 'window.durationMs',
      apply: (o: Record<string, unknown>) => void (o.window = { type: 'time', durationMs }),
    })),
  invalidNumber({ min: 1, max: 1000, integer: true }).map((buckets) => ({
    path: 'window.buckets',
    apply: (o: Record<string, unknown>) =>
      void (o.window = { type: 'time', durationMs: 60_000, buckets }),
  })),
);

const unknownKey = fc.string({ minLength: 1, maxLength: 12 }).map((s) => `x${s}`);

/** Mutations of a breaker's options: a leaf made invalid, an object made junk, a throwing getter, an unknown key. */
function breakerMutation(
  leafPaths: readonly string[] = Object.keys(BREAKER_LEAVES),
): fc.Arbitrary<Mutation> {
  const ensureParents = (o: Record<string, unknown>, path: string) => {
    // A leaf of overload, share, window or aggregate needs its object (and aggregate its perKey).
    if (path.startsWith('overload.') && typeof o.overload !== 'object') o.overload = {};
    if (path.startsWith('share.') && typeof o.share !== 'object') o.share = {};
    for (const [key, required] of Object.entries(RECOVERY_REQUIRED)) {
      if (!path.startsWith(`${key}.`)) continue;
      if (typeof o[key] !== 'object' || o[key] === null) o[key] = {};
      const given = o[key] as Record<string, unknown>;
      for (const [leaf, value] of Object.entries(required)) given[leaf] ??= value;
      // Left within their bounds, so that only the mutated option is wrong.
      delete given.queueTimeoutMs;
      delete given.timeoutMs;
    }
    if (path.startsWith('aggregate.')) {
      o.perKey ??= {};
      if (typeof o.aggregate !== 'object') o.aggregate = { openWhenOpenRatio: 0.5 };
    }
  };
  const leaf = fc.constantFrom(...leafPaths).chain((path) => {
    const spec = BREAKER_LEAVES[path]!;
    return fc
      .oneof(spec.invalid, spec.required ? fc.constant(undefined) : spec.invalid)
      .map((value) => ({
        path,
        apply: (o: Record<string, unknown>) => {
          ensureParents(o, path);
          set(o, path, value);
        },
      }));
  });
  const object = fc
    .tuple(fc.constantFrom(...OBJECT_PATHS.filter((p) => p !== 'window')), notAPlainObject)
    // `share: true | false` and `overload: false` are documented values, not junk.
    .filter(
      ([path, value]) =>
        !(path === 'share' && typeof value === 'boolean') &&
        !(path === 'overload' && value === false),
    )
    .map(([path, value]) => ({
      path,
      apply: (o: Record<string, unknown>) => {
        if (path === 'aggregate') o.perKey ??= {};
        o[path] = value;
      },
    }));
  const objectFor =
    (path: string): Mutation['apply'] =>
    (o) =>
      ensureParents(o, `${path}.`);
  const getter = fc.constantFrom(...leafPaths).map((path) => ({
    path,
    apply: (o: Record<string, unknown>) => {
      ensureParents(o, path);
      set(o, path, 0);
      const keys = path.split('.');
      const owner = (keys.length === 1 ? o : get(o, keys[0]!)) as Record<string, unknown>;
      Object.defineProperty(owner, keys.at(-1)!, {
        enumerable: true,
        get: () => {
          throw new RangeError('hostile getter');
        },
      });
      // fast-check prints counterexamples: it must not trip on the getter (a non-enumerable key, which options ignore).
      Object.defineProperty(owner, fc.toStringMethod, {
        value: () => `{ ${keys.at(-1)!}: <throwing getter> }`,
      });
    },
  }));
  const unknown = fc.tuple(fc.constantFrom('', ...OBJECT_PATHS), unknownKey).map(([at, key]) => ({
    path: at === '' ? key : `${at}.${key}`,
    apply: (o: Record<string, unknown>) => {
      if (at === '') {
        o[key] = 1;
        return;
      }
      if (at === 'window') o.window = { type: 'count', size: 10 };
      else if (at === 'aggregate') {
        o.perKey ??= {};
        o.aggregate = { openWhenOpenRatio: 0.5 };
      } else if (typeof o[at] !== 'object' || o[at] === null) objectFor(at)(o);
      if (typeof o[at] !== 'object' || o[at] === null) o[at] = {};
      (o[at] as Record<string, unknown>)[key] = 1;
    },
  }));
  return fc.oneof(
    { weight: 6, arbitrary: leaf },
    { weight: 2, arbitrary: object },
    { weight: 2, arbitrary: WINDOW_MUTATIONS },
    { weight: 1, arbitrary: getter },
    { weight: 2, arbitrary: unknown },
  );
}

function invalidBreakerOptions(
  shape: BreakerSetShape = {},
  leafPaths?: readonly string[],
): fc.Arbitrary<[Record<string, unknown>, Mutation]> {
  return fc
    .tuple(validBreakerOptions(shape), breakerMutation(leafPaths))
    .map(([valid, mutation]) => {
      const options = clone(valid);
      mutation.apply(options);
      return [options, mutation];
    });
}

/** The error an invalid option must produce: of the given class, starting with the subject, naming the path. */
function expectNamed(
  error: unknown,
  subject: string | readonly string[],
  path: string,
  type: new (...args: never[]) => Error = Error,
): void {
  expect(error).toBeInstanceOf(type);
  const message = (error as Error).message;
  const subjects = typeof subject === 'string' ? [subject] : subject;
  if (!subjects.some((s) => message.startsWith(`${s}:`)) || !message.includes(`"${path}"`)) {
    throw new Error(
      `expected a message starting with ${subjects.map((s) => JSON.stringify(s)).join(' or ')} and naming "${path}", got: ${message}`,
    );
  }
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

const settings = (numRuns: number) => ({ seed: SEED, numRuns });

describe('option fuzzing', () => {
  it(`new Breaker(name, options): ${RUNS.breaker} valid and ${RUNS.breaker} invalid option sets`, () => {
    fc.assert(
      fc.property(validBreakerOptions(), (options) => {
        count('Breaker', 'valid');
        expect(new Breaker('fuzz', options as BreakerOptions).name).toBe('fuzz');
      }),
      settings(RUNS.breaker),
    );
    fc.assert(
      fc.property(invalidBreakerOptions(), ([options, mutation]) => {
        count('Breaker', 'invalid');
        const error = thrown(() => new Breaker('fuzz', options as BreakerOptions));
        expectNamed(error, 'Circuit breaker "fuzz"', mutation.path, BreakerConfigError);
        expect(error).toMatchObject({ breakerName: 'fuzz', option: mutation.path });
      }),
      settings(RUNS.breaker),
    );
  });

  // ------------------------------------------------------------ module options

  const fakeStore = () => ({
    hydrate: async () => undefined,
    close: async () => undefined,
    coordinator: { mayProbe: () => true, transitioned: () => undefined },
  });
  const MODULE_SPECS: Record<string, Spec> = {
    strict: { valid: fc.boolean(), invalid: notABoolean },
    clock: {
      valid: fc.constant({ now: () => 0 }),
      invalid: fc.oneof(notAPlainObject, fc.constant({ now: 5 }), fc.constant({})),
    },
    eventEmitter: {
      valid: fc.constant({ emit: () => true }),
      invalid: fc.oneof(notAPlainObject, fc.constant({ emit: 'x' })),
    },
    store: {
      valid: fc.constant(null).map(fakeStore),
      invalid: fc.oneof(
        notAPlainObject,
        fc.constant({ hydrate: () => undefined, close: () => undefined }),
      ),
    },
    'logging.level': {
      valid: fc.constantFrom('verbose', 'debug', 'log', 'warn'),
      invalid: fc.oneof(hostile, fc.constantFrom('error', 'LOG', '', 'fatal')),
    },
    'logging.maxPerSecond': num(R.count),
  };
  const nameArb = fc.oneof(
    fc.constantFrom('payments', 'search', 'a.b', 'with space', 'ünï'),
    fc.string({ minLength: 1, maxLength: 8 }),
  );
  const pathOfName = (name: string) =>
    /^[A-Za-z_$][\w$-]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;

  const validModule = fc
    .record(
      {
        module: leaves(MODULE_SPECS, Object.keys(MODULE_SPECS)),
        logging: fc.constantFrom<unknown>(undefined, false, 'object'),
        defaults: fc.option(validBreakerOptions({ onlyIndependent: true }), { nil: undefined }),
        breakers: fc.option(
          fc.dictionary(nameArb, validBreakerOptions({ share: false }), { maxKeys: 3 }),
          { nil: undefined },
        ),
      },
      { requiredKeys: ['module', 'logging', 'defaults', 'breakers'] },
    )
    .map(({ module, logging, defaults, breakers }) => {
      const options: Record<string, unknown> = {};
      for (const [path, value] of Object.entries(module))
        if (!path.startsWith('logging.') || logging === 'object') set(options, path, value);
      if (logging === false) options.logging = false;
      if (defaults !== undefined) options.defaults = defaults;
      if (breakers !== undefined)
        options.breakers = Object.fromEntries(
          Object.entries(breakers).filter(([name]) => name !== '' && name !== '__proto__'),
        );
      // A queue wait within the deadline a breaker takes from the defaults.
      const deadline = defaults?.timeoutMs;
      for (const breaker of Object.values(breakers ?? {})) {
        const bulkhead = breaker.bulkhead as Record<string, number | undefined> | undefined;
        if (
          typeof deadline === 'number' &&
          breaker.timeoutMs === undefined &&
          bulkhead?.queueTimeoutMs !== undefined
        )
          bulkhead.queueTimeoutMs = Math.min(bulkhead.queueTimeoutMs, deadline);
      }
      return options;
    });

  /** An invalid module option set, with the subject and the path its error must name. */
  const invalidModule: fc.Arbitrary<{
    options: Record<string, unknown>;
    subject: string;
    path: string;
    type: new (...args: never[]) => Error;
  }> = fc.oneof(
    fc.tuple(validModule, fc.constantFrom(...Object.keys(MODULE_SPECS))).chain(([valid, path]) =>
      MODULE_SPECS[path]!.invalid.map((value) => {
        const options = clone(valid);
        set(options, path, value);
        return { options, subject: 'CircuitBreakerModule', path, type: TypeError as never };
      }),
    ),
    fc
      .tuple(
        validModule,
        fc.oneof(
          notAPlainObject.filter((v) => v !== false),
          fc.constant(true),
        ),
      )
      .map(([valid, value]) => {
        const options = clone(valid);
        options.logging = value;
        return {
          options,
          subject: 'CircuitBreakerModule',
          path: 'logging',
          type: TypeError as never,
        };
      }),
    fc.tuple(validModule, fc.constantFrom('', 'logging'), unknownKey).map(([valid, at, key]) => {
      const options = clone(valid);
      if (at === 'logging') options.logging = { [key]: 1 };
      else options[key] = 1;
      return {
        options,
        subject: 'CircuitBreakerModule',
        path: at === '' ? key : `${at}.${key}`,
        type: TypeError as never,
      };
    }),
    fc.tuple(validModule, notAPlainObject).map(([valid, value]) => {
      const options = clone(valid);
      options.breakers = value;
      return {
        options,
        subject: 'CircuitBreakerModule',
        path: 'breakers',
        type: TypeError as never,
      };
    }),
    fc
      .tuple(validModule, invalidBreakerOptions({ onlyIndependent: true }, INDEPENDENT))
      .map(([valid, [defaults, mutation]]) => {
        const options = clone(valid);
        options.defaults = defaults;
        return {
          options,
          subject: 'CircuitBreakerModule',
          path: `defaults.${mutation.path}`,
          type: BreakerConfigError as never,
        };
      }),
    fc
      .tuple(validModule, nameArb, invalidBreakerOptions({ share: false }))
      .map(([valid, name, [breaker, mutation]]) => {
        const options = clone(valid);
        const safe = name === '__proto__' ? 'proto' : name;
        options.breakers = { ...(options.breakers as object), [safe]: breaker };
        return {
          options,
          subject: `Circuit breaker "${safe}" in CircuitBreakerModule`,
          path: `breakers${pathOfName(safe)}.${mutation.path}`,
          type: BreakerConfigError as never,
        };
      }),
  );

  it(`CircuitBreakerModule.forRoot / forRootAsync validation: ${RUNS.moduleOptions} valid and ${RUNS.moduleOptions} invalid option sets`, () => {
    fc.assert(
      fc.property(validModule, (options) => {
        count('module options', 'valid');
        validateModuleOptions(options);
      }),
      settings(RUNS.moduleOptions),
    );
    fc.assert(
      fc.property(invalidModule, ({ options, subject, path, type }) => {
        count('module options', 'invalid');
        expectNamed(
          thrown(() => validateModuleOptions(options)),
          subject,
          path,
          type,
        );
      }),
      settings(RUNS.moduleOptions),
    );
  });

  it(`CircuitBreakerModule.forFeature: ${RUNS.forFeature} valid and ${RUNS.forFeature} invalid definitions`, () => {
    const FOR_FEATURE = 'CircuitBreakerModule.forFeature()';
    // Shapes fail at forFeature(); ranges at start-up, through the function the registry calls there.
    const define = (record: Record<string, unknown>) => {
      CircuitBreakerModule.forFeature(record as never);
      for (const [name, options] of Object.entries(record))
        checkBreakerDefinition(
          name,
          options,
          undefined,
          FOR_FEATURE,
          pathOfName(name).replace(/^\./, ''),
        );
    };
    fc.assert(
      fc.property(nameArb, validBreakerOptions(), (name, options) => {
        count('forFeature', 'valid');
        define({ [name]: options });
      }),
      settings(RUNS.forFeature),
    );
    fc.assert(
      fc.property(
        nameArb.filter((n) => n !== '__proto__'),
        invalidBreakerOptions(),
        (name, [options, mutation]) => {
          count('forFeature', 'invalid');
          expectNamed(
            thrown(() => define({ [name]: options })),
            `Circuit breaker "${name}" in ${FOR_FEATURE}`,
            `${pathOfName(name).replace(/^\./, '')}.${mutation.path}`,
            BreakerConfigError,
          );
        },
      ),
      settings(RUNS.forFeature),
    );
  });

  it(`real Nest module compilations: ${RUNS.nestCompilation} valid and ${RUNS.nestCompilation} invalid, through forRoot, forRootAsync and forFeature`, async () => {
    const compile = async (
      options: Record<string, unknown>,
      form: 'forRoot' | 'forRootAsync' | 'forFeature',
    ) => {
      const { breakers, ...rest } = options;
      const imports =
        form === 'forRoot'
          ? [CircuitBreakerModule.forRoot(options as never)]
          : form === 'forRootAsync'
            ? [CircuitBreakerModule.forRootAsync({ useFactory: async () => options as never })]
            : [
                CircuitBreakerModule.forRoot(rest as never),
                ...(breakers === undefined || Object.keys(breakers as object).length === 0
                  ? []
                  : [CircuitBreakerModule.forFeature(breakers as never)]),
              ];
      const moduleRef = await Test.createTestingModule({ imports }).compile();
      try {
        await moduleRef.init();
        return moduleRef.get(CircuitBreakerRegistry).list();
      } finally {
        await moduleRef.close();
      }
    };
    const form = fc.constantFrom('forRoot', 'forRootAsync', 'forFeature') as fc.Arbitrary<
      'forRoot' | 'forRootAsync' | 'forFeature'
    >;
    await fc.assert(
      fc.asyncProperty(validModule, form, async (options, how) => {
        count('Nest compilation', 'valid');
        expect(await compile(options, how)).toEqual(
          expect.arrayContaining(Object.keys((options.breakers as object | undefined) ?? {})),
        );
      }),
      settings(RUNS.nestCompilation),
    );
    // forRoot / forRootAsync only: forFeature names the breaker's path differently, and is covered above.
    await fc.assert(
      fc.asyncProperty(
        invalidModule,
        fc.constantFrom('forRoot', 'forRootAsync') as fc.Arbitrary<'forRoot' | 'forRootAsync'>,
        async ({ options, subject, path }, how) => {
          count('Nest compilation', 'invalid');
          let error: unknown;
          try {
            await compile(options, how);
          } catch (e) {
            error = e;
          }
          expectNamed(error, subject, path);
        },
      ),
      settings(RUNS.nestCompilation),
    );
  });

  // ------------------------------------------------------------ decorator and operator

  it(`@CircuitBreaker() options and withRetry(): ${RUNS.decorator} valid and ${RUNS.decorator} invalid each`, () => {
    const PLACE = 'Fuzz.call';
    const decorate = (options: unknown) => {
      class Fuzz {
        // Async, so that its kind is known without metadata: a retry policy needs a Promise method.
        async call(): Promise<number> {
          return 1;
        }
        rescue(): number {
          return 0;
        }
      }
      const descriptor = Object.getOwnPropertyDescriptor(Fuzz.prototype, 'call')!;
      CircuitBreaker(options as never)(Fuzz.prototype, 'call', descriptor);
    };
    // The breaker options' ranges are checked at start-up, over the module's defaults, by the registry.
    const start = (options: Record<string, unknown>) => {
      const {
        name = PLACE,
        fallback: _fallback,
        key: _key,
        retry: _retry,
        ...breakerOptions
      } = options;
      checkBreakerDefinition(
        name as string,
        breakerOptions,
        undefined,
        `@CircuitBreaker() on ${PLACE}`,
        '',
      );
    };
    const fallbackArb = fc.oneof(
      aFunction,
      fc.constant('rescue'),
      fc.record({
        lastGood: fc.record(
          {
            maxAgeMs: validNumber({ min: 0, minExclusive: true, max: Number.MAX_VALUE }),
            maxEntries: validNumber(R.count),
            key: aFunction,
          },
          { requiredKeys: ['maxAgeMs'] },
        ),
      }),
    );
    const retryArb = fc
      .record(
        {
          attempts: fc.integer({ min: 1, max: 10 }),
          backoff: fc.record(
            {
              initialMs: validNumber({ min: 0, max: MAX_TIMER }),
              multiplier: validNumber({ min: 1, max: 1_000 }),
              maxMs: validNumber({ min: 0, max: MAX_TIMER }),
              jitter: validNumber(R.unit),
            },
            { requiredKeys: [] },
          ),
          budget: fc.oneof(
            fc.constant(false),
            fc.record(
              { ratio: validNumber(R.unit), minPerSecond: validNumber({ min: 0, max: 1e6 }) },
              { requiredKeys: [] },
            ),
          ),
          maxRetryAfterMs: validNumber({ min: 0, max: MAX_TIMER }),
        },
        { requiredKeys: ['attempts'] },
      )
      .map((retry) => {
        const backoff = retry.backoff as Record<string, number> | undefined;
        // The cap of the backoff is at least its first wait.
        if (backoff?.maxMs !== undefined)
          backoff.maxMs = Math.max(backoff.maxMs, backoff.initialMs ?? 100);
        return retry;
      });
    const invalidRetry: fc.Arbitrary<{ options: Record<string, unknown>; path: string }> = fc.oneof(
      fc
        .oneof(notAPlainObject, fc.constant(null))
        .map((retry) => ({ options: { retry }, path: 'retry' })),
      fc
        .oneof(invalidNumber({ min: 1, max: 10, integer: true }), fc.constant(undefined))
        .map((attempts) => ({ options: { retry: { attempts } }, path: 'retry.attempts' })),
      invalidNumber({ min: 0, max: MAX_TIMER }).map((initialMs) => ({
        options: { retry: { attempts: 2, backoff: { initialMs } } },
        path: 'retry.backoff.initialMs',
      })),
      invalidNumber(R.unit).map((jitter) => ({
        options: { retry: { attempts: 2, backoff: { jitter } } },
        path: 'retry.backoff.jitter',
      })),
      fc
        .oneof(
          notAPlainObject.filter((v) => v !== false),
          fc.constant(true),
        )
        .map((budget) => ({ options: { retry: { attempts: 2, budget } }, path: 'retry.budget' })),
      invalidNumber(R.unit).map((ratio) => ({
        options: { retry: { attempts: 2, budget: { ratio } } },
        path: 'retry.budget.ratio',
      })),
      unknownKey.map((key) => ({
        options: { retry: { attempts: 2, [key]: 1 } },
        path: `retry.${key}`,
      })),
    );
    // The engine's helper checks the same policy, with errors naming the breaker.
    const retried = new Breaker('fuzz');
    fc.assert(
      fc.property(retryArb, (retry) => {
        count('withRetry', 'valid');
        expect(withRetry(retried, retry as never).breaker).toBe(retried);
      }),
      settings(RUNS.decorator),
    );
    fc.assert(
      fc.property(invalidRetry, ({ options, path }) => {
        count('withRetry', 'invalid');
        const error = thrown(() => withRetry(retried, options.retry as never));
        expectNamed(error, 'Circuit breaker "fuzz"', path, BreakerConfigError);
        expect(error).toMatchObject({ breakerName: 'fuzz', option: path });
      }),
      settings(RUNS.decorator),
    );
    const methodOptions = fc.record(
      {
        name: fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: undefined }),
        fallback: fc.option(fallbackArb, { nil: undefined }),
        key: fc.option(aFunction, { nil: undefined }),
        retry: fc.option(retryArb, { nil: undefined }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(methodOptions, validBreakerOptions({ share: false }), (method, breaker) => {
        count('decorator', 'valid');
        const options = { ...breaker, ...method };
        decorate(options);
        start(options);
      }),
      settings(RUNS.decorator),
    );
    const invalidMethod: fc.Arbitrary<{ options: Record<string, unknown>; path: string }> =
      fc.oneof(
        fc
          .oneof(hostile, fc.constant(''), fc.integer())
          .map((name) => ({ options: { name }, path: 'name' })),
        notAFunction.map((key) => ({ options: { key }, path: 'key' })),
        fc
          .oneof(hostile, fc.integer(), fc.constant({}))
          .map((fallback) => ({ options: { fallback }, path: 'fallback' })),
        fc.oneof(notAPlainObject, fc.constant(undefined)).map((lastGood) => ({
          options: { fallback: { lastGood } },
          path: lastGood === undefined ? 'fallback' : 'fallback.lastGood',
        })),
        fc
          .string({ minLength: 1 })
          .filter(
            (name) =>
              !['call', 'rescue', 'constructor'].includes(name) && !(name in Object.prototype),
          )
          .map((fallback) => ({ options: { fallback }, path: 'fallback' })),
        fc
          .oneof(
            invalidNumber({ min: 0, minExclusive: true, max: Number.MAX_VALUE }),
            fc.constant(undefined),
          )
          .map((maxAgeMs) => ({
            options: { fallback: { lastGood: { maxAgeMs } } },
            path: 'fallback.lastGood.maxAgeMs',
          })),
        invalidNumber(R.count).map((maxEntries) => ({
          options: { fallback: { lastGood: { maxAgeMs: 1, maxEntries } } },
          path: 'fallback.lastGood.maxEntries',
        })),
        unknownKey.map((key) => ({ options: { [key]: 1 }, path: key })),
      );
    fc.assert(
      fc.property(
        fc.oneof(
          invalidMethod.map((m) => ({ ...m, breaker: false })),
          // A retry policy is checked as the breaker's options are: its errors name the breaker.
          invalidRetry.map((m) => ({ ...m, breaker: true })),
          invalidBreakerOptions({ share: false }).map(([options, m]) => ({
            options,
            path: m.path,
            breaker: true,
          })),
        ),
        ({ options, path, breaker }) => {
          count('decorator', 'invalid');
          const error = thrown(() => {
            decorate(options);
            start(options);
          });
          // The decorator reads every key first (an unreadable or unknown one is its own error); the breaker checks the values.
          expectNamed(
            error,
            breaker
              ? [
                  `Circuit breaker "${PLACE}" in @CircuitBreaker() on ${PLACE}`,
                  `@CircuitBreaker() on ${PLACE}`,
                ]
              : `@CircuitBreaker() on ${PLACE}`,
            path,
          );
        },
      ),
      settings(RUNS.decorator),
    );
  });

  it(`circuitBreaker() operator options: ${RUNS.operator} valid and ${RUNS.operator} invalid`, () => {
    const breaker = new Breaker('fuzz');
    fc.assert(
      fc.property(
        fc.record(
          {
            fallback: fc.option(aFunction, { nil: undefined }),
            key: fc.option(aFunction, { nil: undefined }),
          },
          { requiredKeys: [] },
        ),
        (options) => {
          count('operator', 'valid');
          expect(typeof circuitBreaker(breaker, options as never)).toBe('function');
        },
      ),
      settings(RUNS.operator),
    );
    const invalid = fc.oneof(
      notAFunction.map((fallback) => ({ options: { fallback } as unknown, path: 'fallback' })),
      notAFunction.map((key) => ({ options: { key } as unknown, path: 'key' })),
      unknownKey.map((key) => ({ options: { [key]: () => undefined } as unknown, path: key })),
      notAPlainObject
        .filter((v) => v !== undefined)
        .map((options) => ({ options, path: 'options' })),
    );
    fc.assert(
      fc.property(invalid, ({ options, path }) => {
        count('operator', 'invalid');
        expectNamed(
          thrown(() => circuitBreaker(breaker, options as never)),
          'circuitBreaker() on circuit breaker "fuzz"',
          path,
          TypeError,
        );
      }),
      settings(RUNS.operator),
    );
  });

  it(`@UseCircuitBreaker() and @RequireCircuitBreaker() arguments: ${RUNS.admission} valid and ${RUNS.admission} invalid each`, () => {
    const SITE = 'Fuzz.call';
    const onMethod = (decorator: MethodDecorator) => {
      class Fuzz {
        call(): number {
          return 1;
        }
      }
      const descriptor = Object.getOwnPropertyDescriptor(Fuzz.prototype, 'call')!;
      decorator(Fuzz.prototype, 'call', descriptor);
    };
    const name = fc.string({ minLength: 1, maxLength: 10 });
    const interception = fc.record(
      {
        key: fc.option(aFunction, { nil: undefined }),
        fallback: fc.option(aFunction, { nil: undefined }),
      },
      { requiredKeys: [] },
    );
    const circuit = fc.oneof(
      name,
      fc.record(
        { name, key: fc.option(aFunction, { nil: undefined }) },
        { requiredKeys: ['name'] },
      ),
    );
    fc.assert(
      fc.property(
        name,
        interception,
        fc.array(circuit, { minLength: 1, maxLength: 4 }),
        (n, o, c) => {
          count('admission', 'valid');
          onMethod(UseCircuitBreaker(n, o as never));
          onMethod(RequireCircuitBreaker(...(c as never[])));
        },
      ),
      settings(RUNS.admission),
    );
    const badName = fc.oneof(hostile, fc.constant(''), fc.integer());
    const invalidUse = fc.oneof(
      badName.map((n) => ({ args: [n, {}], path: 'name' })),
      notAFunction.map((key) => ({ args: ['quotes', { key }], path: 'key' })),
      notAFunction.map((fallback) => ({ args: ['quotes', { fallback }], path: 'fallback' })),
      unknownKey.map((key) => ({ args: ['quotes', { [key]: () => 1 }], path: key })),
      notAPlainObject
        .filter((v) => v !== undefined)
        .map((options) => ({ args: ['quotes', options], path: 'options' })),
    );
    const invalidCircuit = fc.oneof(
      badName.map((c) => ({ circuit: c, path: '' })),
      badName.map((n) => ({ circuit: { name: n }, path: '.name' })),
      notAFunction.map((key) => ({ circuit: { name: 'quotes', key }, path: '.key' })),
      unknownKey.map((key) => ({ circuit: { name: 'quotes', [key]: 1 }, path: `.${key}` })),
    );
    fc.assert(
      fc.property(
        invalidUse,
        fc.array(name, { maxLength: 3 }),
        invalidCircuit,
        ({ args, path }, before, bad) => {
          count('admission', 'invalid');
          expectNamed(
            thrown(() => onMethod(UseCircuitBreaker(...(args as [string, never])))),
            `@UseCircuitBreaker() on ${SITE}`,
            path,
            TypeError,
          );
          // The bad circuit after valid ones: the path names its index.
          expectNamed(
            thrown(() => onMethod(RequireCircuitBreaker(...before, bad.circuit as never))),
            `@RequireCircuitBreaker() on ${SITE}`,
            `[${before.length}]${bad.path}`,
            TypeError,
          );
        },
      ),
      settings(RUNS.admission),
    );
  });

  // ------------------------------------------------------------ integrations

  it(`new RedisBreakerStore(options), with fake clients: ${RUNS.redisStore} valid and ${RUNS.redisStore} invalid`, () => {
    // Duck-typed clients: the constructor only keeps them; nothing connects.
    const client = () => ({
      eval: () => undefined,
      hgetall: () => undefined,
      on: () => undefined,
      duplicate: () => client(),
    });
    const timer = { min: 1, max: MAX_TIMER, integer: true };
    const SPECS: Record<string, Spec> = {
      subscriber: {
        valid: fc.constant(null).map(client),
        invalid: fc.oneof(notAPlainObject, fc.constant({ eval: () => undefined })),
      },
      keyPrefix: { valid: fc.string(), invalid: fc.oneof(hostile, fc.integer(), fc.boolean()) },
      instanceId: {
        valid: fc.string({ minLength: 1 }),
        invalid: fc.oneof(hostile, fc.constant(''), fc.integer()),
      },
      reconcileIntervalMs: { valid: validNumber(timer), invalid: invalidNumber(timer) },
      operationTimeoutMs: { valid: validNumber(timer), invalid: invalidNumber(timer) },
      hydrateTimeoutMs: { valid: validNumber(timer), invalid: invalidNumber(timer) },
      maxQueue: num(R.count),
      closeClient: { valid: fc.boolean(), invalid: notABoolean },
      logger: {
        valid: fc.constantFrom<unknown>(false, { warn: () => undefined, log: () => undefined }),
        invalid: fc.oneof(
          notAPlainObject,
          fc.constant(true),
          fc.constant({ warn: () => undefined }),
        ),
      },
    };
    const valid = leaves(SPECS, Object.keys(SPECS)).map((options) => ({
      ...options,
      redis: client(),
      logger: options.logger ?? false,
    }));
    fc.assert(
      fc.property(valid, (options) => {
        count('RedisBreakerStore', 'valid');
        expect(new RedisBreakerStore(options as never).shared).toBe(false);
      }),
      settings(RUNS.redisStore),
    );
    const invalid = fc.oneof(
      fc
        .tuple(valid, fc.constantFrom(...Object.keys(SPECS)))
        .chain(([options, path]) =>
          SPECS[path]!.invalid.map((value) => ({ options: { ...options, [path]: value }, path })),
        ),
      fc
        .tuple(
          valid,
          fc.oneof(
            notAPlainObject,
            fc.constant({ eval: () => undefined, hgetall: () => undefined, on: () => undefined }),
          ),
        )
        .map(([options, redis]) => ({
          options: { ...options, redis, subscriber: undefined },
          path: 'redis',
        })),
      valid.map((options) => ({
        options: { ...options, subscriber: options.redis },
        path: 'subscriber',
      })),
      valid.map((options) => ({ options: { ...options, redis: undefined }, path: 'redis' })),
      fc
        .tuple(valid, unknownKey)
        .map(([options, key]) => ({ options: { ...options, [key]: 1 }, path: key })),
    );
    fc.assert(
      fc.property(invalid, ({ options, path }) => {
        count('RedisBreakerStore', 'invalid');
        expectNamed(
          thrown(() => new RedisBreakerStore(options as never)),
          'RedisBreakerStore',
          path,
          TypeError,
        );
      }),
      settings(RUNS.redisStore),
    );
  });

  it(`CircuitBreakerMetricsModule.forRoot(options): ${RUNS.metrics} valid and ${RUNS.metrics} invalid`, () => {
    const SPECS: Record<string, Spec> = {
      registry: {
        valid: fc.constantFrom<unknown>(new Registry(), { getSingleMetric: () => undefined }),
        invalid: fc.oneof(notAPlainObject, fc.constant({})),
      },
      prefix: {
        valid: fc.stringMatching(/^(?:[a-zA-Z_:][a-zA-Z0-9_:]{0,10})?$/),
        invalid: fc.oneof(hostile, fc.integer(), fc.constantFrom('1st_', 'my-app_', 'a b', 'ä')),
      },
      keyLabel: { valid: fc.boolean(), invalid: notABoolean },
    };
    const valid = leaves(SPECS, Object.keys(SPECS));
    fc.assert(
      fc.property(valid, (options) => {
        count('metrics module', 'valid');
        expect(CircuitBreakerMetricsModule.forRoot(options as never).module).toBe(
          CircuitBreakerMetricsModule,
        );
      }),
      settings(RUNS.metrics),
    );
    const invalid = fc.oneof(
      fc
        .tuple(valid, fc.constantFrom(...Object.keys(SPECS)))
        .chain(([options, path]) =>
          SPECS[path]!.invalid.map((value) => ({ options: { ...options, [path]: value }, path })),
        ),
      fc
        .tuple(valid, unknownKey)
        .map(([options, key]) => ({ options: { ...options, [key]: 1 }, path: key })),
    );
    fc.assert(
      fc.property(invalid, ({ options, path }) => {
        count('metrics module', 'invalid');
        expectNamed(
          thrown(() => CircuitBreakerMetricsModule.forRoot(options as never)),
          'CircuitBreakerMetricsModule',
          path,
          TypeError,
        );
      }),
      settings(RUNS.metrics),
    );
  });

  it(`CircuitBreakerTelemetryModule.forRoot(options): ${RUNS.telemetry} valid and ${RUNS.telemetry} invalid`, () => {
    const SPECS: Record<string, Spec> = {
      meterProvider: {
        valid: fc.constant({ getMeter: () => ({}) }),
        invalid: fc.oneof(notAPlainObject, fc.constant({}), fc.constant({ getMeter: 1 })),
      },
      keyAttribute: { valid: fc.boolean(), invalid: notABoolean },
    };
    const valid = leaves(SPECS, Object.keys(SPECS));
    fc.assert(
      fc.property(valid, (options) => {
        count('telemetry module', 'valid');
        expect(CircuitBreakerTelemetryModule.forRoot(options as never).module).toBe(
          CircuitBreakerTelemetryModule,
        );
      }),
      settings(RUNS.telemetry),
    );
    const invalid = fc.oneof(
      fc
        .tuple(valid, fc.constantFrom(...Object.keys(SPECS)))
        .chain(([options, path]) =>
          SPECS[path]!.invalid.map((value) => ({ options: { ...options, [path]: value }, path })),
        ),
      fc
        .tuple(valid, unknownKey)
        .map(([options, key]) => ({ options: { ...options, [key]: 1 }, path: key })),
    );
    fc.assert(
      fc.property(invalid, ({ options, path }) => {
        count('telemetry module', 'invalid');
        expectNamed(
          thrown(() => CircuitBreakerTelemetryModule.forRoot(options as never)),
          'CircuitBreakerTelemetryModule',
          path,
          TypeError,
        );
      }),
      settings(RUNS.telemetry),
    );
  });

  it(`CircuitBreakerHealthIndicator.isHealthy(key, options): ${RUNS.health} valid and ${RUNS.health} invalid`, () => {
    const payments = new Breaker('payments');
    const api = new ConcurrencyLimiter('api');
    const registry = {
      list: () => ['payments'],
      has: (name: string) => name === 'payments',
      get: () => payments,
      limiterNames: () => ['api'],
      limiter: () => api,
    } as unknown as CircuitBreakerRegistry;
    const indicator = new CircuitBreakerHealthIndicator(registry, new HealthIndicatorService());
    const status = fc.constantFrom('up', 'degraded', 'down');
    const SPECS: Record<string, Spec> = {
      breakers: {
        valid: fc.constantFrom<unknown>([], ['payments'], ['payments', 'payments']),
        invalid: fc.oneof(
          notAPlainObject.filter((v) => !Array.isArray(v)),
          fc.constant({}),
          fc.constant([5]),
          fc.constant(['']),
        ),
      },
      openStatus: {
        valid: status,
        invalid: fc.oneof(hostile, fc.constantFrom('Down', 'error', '')),
      },
      halfOpenStatus: { valid: status, invalid: fc.oneof(hostile, fc.constantFrom('Up', 'ok')) },
      limiters: {
        valid: fc.constantFrom<unknown>([], ['api'], ['api', 'api']),
        invalid: fc.oneof(
          notAPlainObject.filter((v) => !Array.isArray(v)),
          fc.constant({}),
          fc.constant([5]),
          fc.constant(['']),
        ),
      },
      sheddingStatus: { valid: status, invalid: fc.oneof(hostile, fc.constantFrom('Shed', '')) },
      details: { valid: fc.boolean(), invalid: notABoolean },
    };
    const valid = leaves(SPECS, Object.keys(SPECS));
    fc.assert(
      fc.property(valid, (options) => {
        count('health indicator', 'valid');
        // A closed breaker and a limiter that never shed: up whatever the statuses of the others.
        expect(
          indicator.isHealthy('circuit_breakers', options as never).circuit_breakers.status,
        ).toBe('up');
      }),
      settings(RUNS.health),
    );
    const invalid = fc.oneof(
      fc.tuple(valid, fc.constantFrom(...Object.keys(SPECS))).chain(([options, path]) =>
        SPECS[path]!.invalid.map((value) => ({
          options: { ...options, [path]: value },
          path:
            (path === 'breakers' || path === 'limiters') && Array.isArray(value)
              ? `${path}[0]`
              : path,
        })),
      ),
      fc
        .tuple(valid, unknownKey)
        .map(([options, key]) => ({ options: { ...options, [key]: 1 }, path: key })),
    );
    fc.assert(
      fc.property(invalid, ({ options, path }) => {
        count('health indicator', 'invalid');
        // It never throws (a throwing indicator is an HTTP 500 in terminus 12): a bad option is `down`, with the message.
        const result = indicator.isHealthy('circuit_breakers', options as never)
          .circuit_breakers as { status: string; message?: string };
        expect(result.status).toBe('down');
        expectNamed(
          new Error(result.message),
          'CircuitBreakerHealthIndicator.isHealthy("circuit_breakers")',
          path,
        );
      }),
      settings(RUNS.health),
    );
  });
});
