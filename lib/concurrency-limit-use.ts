import { CRITICALITIES, type Criticality } from './core/index.js';
import { CRITICALITY_METADATA } from './circuit-breaker.constants.js';
import { OptionChecker } from './core/options/option-checker.js';
import { concurrencyLimitMessages } from './concurrency-limit.messages.js';

/** What `@ConcurrencyLimit()` was given, as checked, with where (for start-up messages). @internal */
export interface ConcurrencyLimitUse {
  /** The limiter's name; `undefined` for the default limiter. */
  readonly name: string | undefined;
  readonly site: string;
}

/** `@ConcurrencyLimit()`'s arguments, read once and checked where they are declared. @internal */
export function checkLimitUse(
  site: string,
  name: unknown,
  options: unknown,
): ConcurrencyLimitUse & { criticality: Criticality | undefined } {
  const check = new OptionChecker(site);
  if (name !== undefined)
    check.string('name', name, 'a non-empty limiter name', (value) => value !== '');
  const { criticality } = check.record('', options, ['criticality'], '{ criticality? }');
  if (criticality !== undefined) check.oneOf('criticality', criticality, CRITICALITIES);
  return {
    name: name as string | undefined,
    criticality: criticality as Criticality | undefined,
    site,
  };
}

/**
 * Sets the criticality of a handler or a class (`on`); a second, different
 * one on the same target is a mistake, reported where it is declared.
 *
 * @internal
 */
export function setCriticality(site: string, on: object, criticality: Criticality): void {
  const earlier = Reflect.getOwnMetadata(CRITICALITY_METADATA, on) as Criticality | undefined;
  if (earlier !== undefined && earlier !== criticality)
    throw new TypeError(concurrencyLimitMessages.criticalityTwice(site, criticality, earlier));
  Reflect.defineMetadata(CRITICALITY_METADATA, criticality, on);
}
