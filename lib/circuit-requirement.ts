import type { ExecutionContext } from '@nestjs/common';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import { OptionChecker } from './core/options/option-checker.js';

/** A required breaker as checked, with where it was required (for start-up messages). @internal */
export interface CircuitRequirement {
  readonly name: string;
  readonly key: ((context: ExecutionContext) => string | undefined) | undefined;
  readonly site: string;
}

/**
 * The required breakers, read once and checked where they are declared: at
 * least one, each a non-empty name or `{ name, key? }`.
 *
 * @internal
 */
export function checkRequiredBreakers(
  site: string,
  circuits: readonly unknown[],
): CircuitRequirement[] {
  const check = new OptionChecker(site);
  if (circuits.length === 0) throw new TypeError(circuitBreakerMessages.noRequiredBreaker(site));
  return circuits.map((circuit, index) => {
    const at = `[${index}]`;
    const expected = 'a breaker name or { name, key? }';
    if (typeof circuit === 'string') {
      check.string(at, circuit, 'a non-empty breaker name', (name) => name !== '', false);
      return { name: circuit, key: undefined, site };
    }
    const { name, key } = check.record(at, circuit, ['name', 'key'], expected, false);
    check.string(`${at}.name`, name, 'a non-empty breaker name', (value) => value !== '', false);
    if (key !== undefined)
      check.func(`${at}.key`, key, 'a function of the ExecutionContext returning a string');
    return { name: name as string, key: key as CircuitRequirement['key'], site };
  });
}
