import { AimdLimit } from './aimd-limit.js';
import { FixedLimit } from './fixed-limit.js';
import type { LimitAlgorithm } from './limit-algorithm.js';
import type { ResolvedLimitOptions } from './limit-options.js';

/** The algorithm `options` name, at its initial limit. @internal */
export function limitAlgorithmOf(options: ResolvedLimitOptions): LimitAlgorithm {
  switch (options.algorithm) {
    case 'fixed':
      return new FixedLimit(options.initialLimit);
    case 'aimd':
    case 'gradient':
      return new AimdLimit(options);
  }
}
