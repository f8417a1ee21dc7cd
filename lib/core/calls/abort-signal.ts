/** Whether `value` can serve as a call's abort signal: an `AbortSignal`, or one from another realm or a polyfill. @internal */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  // A signal from another realm or a polyfill: what the call uses of it is enough.
  const loose = value as Partial<AbortSignal> | null;
  try {
    return (
      typeof loose === 'object' &&
      loose !== null &&
      typeof loose.aborted === 'boolean' &&
      typeof loose.addEventListener === 'function' &&
      typeof loose.removeEventListener === 'function'
    );
  } catch {
    return false;
  }
}
