import type { Clock } from '../../lib/core/index.js';

/**
 * A clock with both readings, for tests of wall-clock steps: `advance()` moves
 * real time (both readings), `stepWall()` moves only the wall clock, as an NTP
 * correction or a resumed VM does.
 */
export class SteppingClock implements Clock {
  private wall: number;
  private ticks: number;

  constructor(start = 1_700_000_000_000) {
    this.wall = start;
    this.ticks = 5_000;
  }

  now(): number {
    return this.wall;
  }

  monotonic(): number {
    return this.ticks;
  }

  advance(ms: number): void {
    this.wall += ms;
    this.ticks += ms;
  }

  stepWall(ms: number): void {
    this.wall += ms;
  }
}
