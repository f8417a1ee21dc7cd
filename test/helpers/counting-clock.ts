import { ManualClock } from './manual-clock.js';

/**
 * A manual clock that counts how often it is read, both readings together:
 * for tests of "this path reads no clock" (the breaker times calls only when
 * something needs durations).
 */
export class CountingClock extends ManualClock {
  reads = 0;

  override now(): number {
    this.reads++;
    return super.now();
  }

  monotonic(): number {
    this.reads++;
    return super.now();
  }

  /** How many times `run` (and what it awaits) read the clock. */
  async readsDuring(run: () => unknown): Promise<number> {
    const before = this.reads;
    await run();
    return this.reads - before;
  }
}
