import type { Breaker, ResolvedBreakerOptions } from '../core/index.js';
import { testingMessages } from './circuit-breaker-testing.messages.js';

/**
 * A breaker's effective options as plain, stable data: `breaker.config` (every
 * default filled in, after validation) with its classifiers shown as
 * `'default'` or `'custom'` and a health check's `fn` as `'custom'`,
 * so that it compares with `toEqual()` and prints in a snapshot.
 *
 * @publicApi
 */
export type DescribedBreakerOptions = Omit<
  ResolvedBreakerOptions,
  'classify' | 'classifyResult' | 'guarded' | 'healthCheck'
> & {
  readonly classify: 'default' | 'custom';
  readonly classifyResult: 'default' | 'custom';
  /** The active health check, its `fn` shown as `'custom'`. */
  readonly healthCheck:
    | (Omit<NonNullable<ResolvedBreakerOptions['healthCheck']>, 'fn'> & { readonly fn: 'custom' })
    | undefined;
};

/**
 * What a breaker is, for a test to assert: the counterpart of Polly.Testing's
 * pipeline descriptor (`GetPipelineDescriptor()`), which lists a pipeline's
 * strategies and their options.
 *
 * @publicApi
 */
export interface BreakerDescriptor {
  readonly name: string;
  readonly kind: 'breaker' | 'per-key family';
  readonly options: DescribedBreakerOptions;
  /** Whether it shares its state with other replicas through the module's store. */
  readonly shared: boolean;
}

/** A partial `DescribedBreakerOptions`, nested objects included: what `expectOptions()` compares. @publicApi */
export type ExpectedBreakerOptions = {
  readonly [K in keyof DescribedBreakerOptions]?: DescribedBreakerOptions[K] extends
    infer O | undefined
    ? O extends object
      ? Partial<O> | undefined
      : DescribedBreakerOptions[K]
    : never;
};

/** @internal */
export function describeBreaker(breaker: Breaker): BreakerDescriptor {
  // Functions cannot be cloned (nor compared): each is named by what it is.
  const { classify, classifyResult, guarded: _internal, healthCheck, ...config } = breaker.config;
  return {
    name: breaker.name,
    kind: config.perKey === undefined ? 'breaker' : 'per-key family',
    options: {
      ...structuredClone(config),
      classify: classify === undefined ? 'default' : 'custom',
      classifyResult: classifyResult === undefined ? 'default' : 'custom',
      healthCheck: healthCheck === undefined ? undefined : { ...healthCheck, fn: 'custom' },
    },
    shared: breaker.snapshot().coordination !== undefined,
  };
}

/**
 * Every difference between what `expected` names and the breaker's effective
 * options, as lines (`timeoutMs is 10000, expected 2000`); empty when they agree.
 *
 * @internal
 */
export function optionDifferences(
  breaker: string,
  actual: DescribedBreakerOptions,
  expected: ExpectedBreakerOptions,
): string[] {
  const differences: string[] = [];
  const compare = (path: string, have: unknown, want: unknown, known: boolean): void => {
    if (!known) throw new TypeError(testingMessages.unknownOption(breaker, path));
    if (isPlain(want) && isPlain(have)) {
      for (const [key, value] of Object.entries(want))
        compare(`${path}.${key}`, have[key], value, key in have);
      return;
    }
    if (JSON.stringify(have) !== JSON.stringify(want))
      differences.push(`${path} is ${show(have)}, expected ${show(want)}`);
  };
  for (const [key, value] of Object.entries(expected))
    compare(key, (actual as Record<string, unknown>)[key], value, key in actual);
  return differences;
}

function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value);
}
