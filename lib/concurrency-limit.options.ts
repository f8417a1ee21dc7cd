import { BreakerConfigError, CRITICALITIES, type ConcurrencyLimitOptions } from './core/index.js';
import { resolveLimitOptions } from './core/limit/limit-options.js';
import { OptionChecker, pathKey } from './core/options/option-checker.js';
import { concurrencyLimitMessages } from './concurrency-limit.messages.js';

/** Where `forRoot({ limiters })` defines limiters, as messages name it. @internal */
export const LIMITERS_FOR_ROOT = 'CircuitBreakerModule.forRoot({ limiters })';
/** Where `forFeatureLimiters({ name: options })` defines limiters, as messages name it. @internal */
export const LIMITERS_FOR_FEATURE = 'CircuitBreakerModule.forFeatureLimiters()';

/** One limiter's definition as checked: its name, its options (a plain copy) and where it was given. @internal */
export interface LimiterDefinition {
  readonly name: string;
  readonly options: ConcurrencyLimitOptions;
  readonly site: string;
  /** The option path of its options where the user wrote them: `limiters.api`. */
  readonly path: string;
}

/**
 * The limiters of a record of name → options (`forRoot({ limiters })` when
 * `root`, `forFeatureLimiters()` otherwise), each checked as the engine checks
 * them, with errors that name the limiter, the site and the option's path
 * where the user wrote it (`limiters.api.maxQueue`), and the closest known
 * option for a typo.
 *
 * @internal
 */
export function checkLimiterDefinitions(
  check: OptionChecker,
  given: unknown,
  root: boolean,
): LimiterDefinition[] {
  const option = 'limiters';
  const site = root ? LIMITERS_FOR_ROOT : LIMITERS_FOR_FEATURE;
  const definitions: LimiterDefinition[] = [];
  for (const [name, options] of check.entries(
    option,
    given,
    'a record of limiter name → options',
    root,
  )) {
    if (name === '') check.fail(option, concurrencyLimitMessages.emptyName());
    const path = root ? `limiters${pathKey(name)}` : pathKey(name).replace(/^\./, '');
    const own = new OptionChecker(
      concurrencyLimitMessages.definitionSubject(name, site),
      (message, at) => new BreakerConfigError(message, name, at),
      (at) => (at === 'options' ? path : `${path}.${at}`),
    );
    // A plain copy of what was given: what was checked is what the limiter is built from.
    const copy = own.record(
      '',
      options,
      Object.keys(resolveLimitOptions(name, {})),
      'an object of limiter options',
      false,
    );
    resolveLimitOptions(name, copy as ConcurrencyLimitOptions, own);
    definitions.push({ name, options: copy as ConcurrencyLimitOptions, site, path });
  }
  return definitions;
}

/** `criticalityHeader` and `criticalityOf` of the module's options. @internal */
export function checkCriticalityOptions(check: OptionChecker, header: unknown, of: unknown): void {
  if (header !== undefined)
    check.string('criticalityHeader', header, 'a header name such as "x-criticality"', (value) =>
      /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value),
    );
  if (of !== undefined)
    check.func(
      'criticalityOf',
      of,
      `a function (context) => ${CRITICALITIES.map((c) => `'${c}'`).join(' | ')} | undefined`,
    );
}
