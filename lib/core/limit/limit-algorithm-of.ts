import { AimdLimit } from './aimd-limit.js';
import { FixedLimit } from './fixed-limit.js';
import { GradientLimit } from './gradient-limit.js';
import type { LimitAlgorithm } from './limit-algorithm.js';
import type { ResolvedLimitOptions } from './limit-options.js';

/** The algorithm `options` name, at its initial limit. @internal */
export function limitAlgorithmOf(options: ResolvedLimitOptions): LimitAlgorithm {
  switch (options.algorithm) {
    case 'fixed':
      return new FixedLimit(options.initialLimit);
    case 'aimd':
      return new AimdLimit(options);
    case 'gradient':
      return new GradientLimit(options);
  }
}
