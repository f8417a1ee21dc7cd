import { describeValue } from '../core/options/option.messages.js';

/**
 * Every text of the environment reader: each names the variable and ends with
 * what to do.
 *
 * @internal
 */
export const envMessages = {
  subject: (variable: string) => `Environment variable ${variable}`,
  breakerSubject: (breaker: string) => `Circuit breaker "${breaker}" (from the environment)`,
  notANumber: (variable: string, text: string) =>
    `Environment variable ${variable}=${JSON.stringify(text)} is not a number. Write digits, e.g. ${variable}=2000.`,
  notANumberOrAuto: (variable: string, text: string) =>
    `Environment variable ${variable}=${JSON.stringify(text)} is not a number or auto. Write digits, e.g. ${variable}=2, or ${variable}=auto.`,
  notABoolean: (variable: string, text: string, alsoNumber: boolean) =>
    `Environment variable ${variable}=${JSON.stringify(text)} is not ${alsoNumber ? 'a number or false' : 'true or false'}. Write ${alsoNumber ? `a number of milliseconds, or ${variable}=false` : `${variable}=true or ${variable}=false`}.`,
  notAWindowType: (variable: string, text: string) =>
    `Environment variable ${variable}=${JSON.stringify(text)} is not a window type. Write ${variable}=count or ${variable}=time.`,
  unknownVariable: (variable: string, prefix: string, suggestion: string) =>
    `Environment variable ${variable} starts with ${prefix} but names no breaker option this application reads.` +
    ` Did you mean ${suggestion}?` +
    ` Name a breaker given in "breakers" (or DEFAULTS) and an option, e.g. ${prefix}PAYMENTS_TIMEOUT_MS.`,
  contradicting: (off: string, other: string) =>
    `Environment variables ${off}=false and ${other} contradict each other: one turns the option off, the other configures it. Remove one of them.`,
  sameSegment: (first: string, second: string, segment: string) =>
    `Circuit breakers "${first}" and "${second}" would both read variables named ${segment}_*. Rename one of them, or read one of them some other way.`,
  reservedName: (breaker: string) =>
    `Circuit breaker "${breaker}" would read the variables of the defaults (DEFAULTS_*). Rename the breaker.`,
  badPrefix: (prefix: unknown) =>
    `circuitBreakerOptionsFromEnv(): "prefix" must be a non-empty string of letters, digits and underscores, got ${describeValue(prefix)}. Pass e.g. { prefix: 'CB_' }.`,
  badBreakers: (breakers: unknown) =>
    `circuitBreakerOptionsFromEnv(): "breakers" must be an array of breaker names, got ${describeValue(breakers)}. Pass the names the variables may configure, e.g. { breakers: ['payments'] }.`,
};
