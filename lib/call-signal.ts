import { AsyncLocalStorage } from 'node:async_hooks';

/** What the storage holds: the call, whose signal is made only if someone asks for it (an AbortController costs microseconds). */
interface SignalSource {
  readonly signal: AbortSignal;
}

const storage = new AsyncLocalStorage<SignalSource>();

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
  return storage.getStore()?.signal;
}

/** @internal Runs `fn` with the signal of `call` as the current call signal. */
export function runWithCallSignal<T>(call: SignalSource, fn: () => T): T {
  return storage.run(call, fn);
}
