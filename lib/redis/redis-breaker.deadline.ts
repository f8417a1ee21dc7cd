import { timerDelay } from '../core/calls/timer-delay.js';

/** A promise and the function that resolves it. @internal */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Settles as `promise` does, or rejects after `ms` with the message `what()` (the timer never keeps the process alive). @internal */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), timerDelay(ms));
    timer.unref();
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
