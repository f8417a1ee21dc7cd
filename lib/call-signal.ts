import { AsyncLocalStorage } from 'node:async_hooks';

/** What the storage holds: the call, whose signal is made only if someone asks for it (an AbortController costs microseconds). */
interface SignalSource {
  readonly signal: AbortSignal;
}

const storage = new AsyncLocalStorage<SignalSource>();
// AsyncLocalStorage.run() costs about as much as the rest of a decorated call: until something in the process
// asks for a call signal, the call is only made current for its method's synchronous part.
let asked = false;
let current: SignalSource | undefined;

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
 * Under the `circuitBreaker()` operator it is the call's signal while the
 * source is subscribed, when the breaker has a deadline:
 * `defer(() => fetch(url, { signal: getCallSignal() }))`. The deadline aborts
 * it, and so does unsubscribing before the call settles.
 *
 * `undefined` outside such a call. Until something in the process has called
 * it once, a call is made current only for its method's synchronous part, unless
 * the method's own source names `getCallSignal` (reading it after an await
 * through a helper, in the very first call of the process, gives `undefined`).
 *
 * @publicApi
 */
export function getCallSignal(): AbortSignal | undefined {
  asked = true;
  return (current ?? storage.getStore())?.signal;
}

/**
 * @internal Runs `fn` with `call` as the current call: for its synchronous
 * part always, and across its awaits (AsyncLocalStorage) once anything in the
 * process has asked for a call signal, or when `acrossAwaits` says the method
 * will (its source names getCallSignal).
 */
export function runWithCallSignal<T>(call: SignalSource, fn: () => T, acrossAwaits = true): T {
  const previous = current;
  current = call;
  try {
    return acrossAwaits || asked ? storage.run(call, fn) : fn();
  } finally {
    current = previous;
  }
}

/**
 * @internal `source.subscribe(observer)` with `call` current, without a closure
 * per subscription: subscribing is synchronous, and what the source starts
 * later reads the signal through AsyncLocalStorage once something has asked.
 */
export function subscribeWithCallSignal<S>(
  call: SignalSource,
  source: { subscribe(observer: never): S },
  observer: unknown,
): S {
  const previous = current;
  current = call;
  try {
    return asked
      ? storage.run(call, subscribeTo<S>, source, observer)
      : subscribeTo(source, observer);
  } finally {
    current = previous;
  }
}

function subscribeTo<S>(source: { subscribe(observer: never): S }, observer: unknown): S {
  return source.subscribe(observer as never);
}

/** @internal `runWithCallSignal()` for `method.apply(thisArg, args)`, without a closure per call. */
export function applyWithCallSignal<T>(
  call: SignalSource,
  method: (...args: any[]) => T,
  thisArg: unknown,
  args: unknown[],
  acrossAwaits: boolean,
): T {
  const previous = current;
  current = call;
  try {
    return acrossAwaits || asked
      ? storage.run(call, Reflect.apply, method, thisArg, args)
      : (method.apply(thisArg, args) as T);
  } finally {
    current = previous;
  }
}

/** @internal Runs a method with its call's signal available to getCallSignal(). */
export function callWithSignal(
  call: { readonly signal: AbortSignal },
  method: (...args: unknown[]) => unknown,
  thisArg: unknown,
  args: unknown[],
): Promise<unknown> {
  return applyWithCallSignal(call, method, thisArg, args, true) as Promise<unknown>;
}

/** @internal The same, across awaits only once something in the process has asked for a call signal. */
export function callWithSignalWhenAsked(
  call: { readonly signal: AbortSignal },
  method: (...args: unknown[]) => unknown,
  thisArg: unknown,
  args: unknown[],
): Promise<unknown> {
  return applyWithCallSignal(call, method, thisArg, args, false) as Promise<unknown>;
}

/** @internal Whether a method reads its call's signal itself: then it must have it after its awaits too, from its first call on. */
export function readsCallSignal(method: (...args: any[]) => unknown): boolean {
  try {
    return Function.prototype.toString.call(method).includes('getCallSignal');
  } catch {
    return true;
  }
}
