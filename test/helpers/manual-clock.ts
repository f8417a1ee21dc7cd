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

/** A random source that replays the given values, then repeats the last one. */
export function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)]!;
}

export const fail = (error: unknown = new Error('boom')) => () => Promise.reject(error);
export const succeed = <T>(value: T) => () => Promise.resolve(value);

/** An HTTP-shaped error as axios throws it. */
export function httpError(status: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`HTTP ${status}`), { response: { status, headers } });
}

/** Settles every pending promise callback. */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A promise whose settlement the test controls. */
export function deferred<T = unknown>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
