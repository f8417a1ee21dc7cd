import type { ExecutionContext } from '@nestjs/common';
import { OptionChecker } from './core/options/option-checker.js';
import type { UseCircuitBreakerOptions } from './interfaces/circuit-breaker-admission-options.interface.js';

/** What `@UseCircuitBreaker()` was given, as checked, with where (for start-up messages). @internal */
export interface CircuitInterception {
  readonly name: string;
  readonly key: ((context: ExecutionContext) => string | undefined) | undefined;
  readonly fallback: UseCircuitBreakerOptions['fallback'];
  readonly site: string;
}

/** `@UseCircuitBreaker()`'s arguments, read once and checked where they are declared. @internal */
export function checkInterception(
  site: string,
  name: unknown,
  options: unknown,
): CircuitInterception {
  const check = new OptionChecker(site);
  check.string('name', name, 'a non-empty breaker name', (value) => value !== '', false);
  const { key, fallback } = check.record('', options, ['key', 'fallback'], '{ key?, fallback? }');
  if (key !== undefined)
    check.func('key', key, 'a function of the ExecutionContext returning a string');
  if (fallback !== undefined)
    check.func('fallback', fallback, 'a function (error, context) => value, Promise or Observable');
  return {
    name: name as string,
    key: key as CircuitInterception['key'],
    fallback: fallback as CircuitInterception['fallback'],
    site,
  };
}
