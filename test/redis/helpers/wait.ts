import type { Breaker, StateChangeEvent } from '../../../lib/core/index.js';

/**
 * Polls `probe` until it returns something other than `undefined`, at most
 * `timeoutMs`: for what happens in another process or in Redis, where there is
 * no event to await.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 5_000,
  everyMs = 5,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The next transition of `breaker` that `matches`, within `timeoutMs`. */
export function nextTransition(
  breaker: Breaker,
  matches: (change: StateChangeEvent) => boolean,
  timeoutMs = 5_000,
): Promise<StateChangeEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(
        new Error(`Timed out after ${timeoutMs} ms waiting for a transition of "${breaker.name}".`),
      );
    }, timeoutMs);
    const off = breaker.on('stateChange', (change) => {
      if (!matches(change)) return;
      clearTimeout(timer);
      off();
      resolve(change);
    });
  });
}
