import type { Clock } from '../../lib/core/index.js';

/** A clock that moves only when the test says so. */
export class ManualClock implements Clock {
  constructor(private time = 1_000_000) {}

  now(): number {
    return this.time;
  }

  advance(ms: number): void {
    this.time += ms;
  }

  set(time: number): void {
    this.time = time;
  }
}
