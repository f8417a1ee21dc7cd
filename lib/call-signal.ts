import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<AbortSignal>();

/**
 * The `AbortSignal` of the protected call in progress, inside a method
 * decorated with `@CircuitBreaker()` whose breaker has a deadline (`timeoutMs`
 * or a probe timeout): pass it on so that the deadline really aborts the work.
 *
 * ```ts
 * @CircuitBreaker({ timeoutMs: 2_000 })
 * async product(id: string) {
 *   return (await fetch(`${base}/products/${id}`, { signal: getCallSignal() })).json();
 * }
 * ```
 *
 * `undefined` outside such a call.
 *
 * @publicApi
 */
export function getCallSignal(): AbortSignal | undefined {
  return storage.getStore();
}

/** @internal Runs `fn` with `signal` as the current call signal. */
export function runWithCallSignal<T>(signal: AbortSignal, fn: () => T): T {
  return storage.run(signal, fn);
}
