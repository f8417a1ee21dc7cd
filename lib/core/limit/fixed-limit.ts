import type { LimitAlgorithm } from './limit-algorithm.js';

/** A limit that never moves: a bulkhead's number, for when it is known. @internal */
export class FixedLimit implements LimitAlgorithm {
  constructor(readonly limit: number) {}

  sample(): void {}
}
