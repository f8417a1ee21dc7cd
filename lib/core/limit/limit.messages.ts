import { describeValue } from '../options/option.messages.js';

/** The texts a concurrency limiter shows a person. @internal */
export const limitMessages = {
  badName: (name: unknown) =>
    `A concurrency limiter needs a non-empty string name, got ${describeValue(name)}. Name it after what it protects, e.g. "api".`,
  badCriticality: (limiter: string, value: unknown, known: readonly string[]) =>
    `Concurrency limiter "${limiter}": a request's criticality must be one of ${known.map((c) => `'${c}'`).join(', ')}, got ${describeValue(value)}.`,
};
