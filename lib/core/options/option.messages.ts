/**
 * The texts every options validator of the package shows a person (the
 * engine, the Nest module, the decorator, the operator, the Redis store and
 * the metric modules): each starts with the subject (a breaker, a module, a
 * decorated method), names the option by its path, shows the value, and says
 * what to do.
 *
 * @internal
 */
export const optionMessages = {
  invalid: (subject: string, path: string, value: unknown, expected: string, optional: boolean) =>
    `${subject}: option "${path}" must be ${expected}, got ${describeValue(value)}.` +
    // null is not "unset" anywhere in this package: say how to get the default instead.
    (value === null && optional ? ' Leave the option out (or undefined) to use its default.' : ''),
  unknown: (
    subject: string,
    path: string,
    known: readonly string[],
    suggestion: string | undefined = undefined,
  ) =>
    `${subject}: unknown option "${path}". Known options: ${known.length === 0 ? '(none)' : known.join(', ')}.` +
    (suggestion === undefined ? '' : ` Did you mean "${suggestion}"?`),
  unreadable: (subject: string, path: string, error: unknown) =>
    `${subject}: option "${path}" could not be read (${errorText(error)}). Pass plain data: an object literal whose properties are values, not throwing getters or Proxy traps.`,
  conflicting: (subject: string, detail: string) => `${subject}: ${detail}`,
};

/**
 * A value as a message shows it, whatever it is: never throws (Symbols,
 * BigInts, revoked Proxies, throwing getters and `toString`s included), and
 * never makes two different values look alike (`5n` is not `5`).
 *
 * @internal
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string':
      return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `a bigint ${value}n`;
    case 'symbol':
      return `a symbol ${value.toString()}`;
    case 'boolean':
      return String(value);
    case 'function':
      return 'a function';
    default:
      return describeObject(value as object | null);
  }
}

/**
 * What was thrown, in a few words (`TypeError: boom`), without trusting it: a
 * hostile value may throw when read.
 *
 * @internal
 */
export function describeFault(fault: unknown): string {
  try {
    if (fault instanceof Error) return `${fault.name}: ${fault.message}`;
  } catch {
    return 'a value that cannot be read';
  }
  return describeValue(fault);
}

const BUILT_INS = new Set([
  'Date',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'RegExp',
  'Promise',
  'Error',
  'TypeError',
  'ArrayBuffer',
  'Uint8Array',
  'Buffer',
  'URL',
]);

function describeObject(value: object | null): string {
  if (value === null) return 'null';
  try {
    if (Array.isArray(value)) return 'an array';
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === null || proto === Object.prototype) return 'an object';
    const constructor = (proto as { constructor?: unknown }).constructor;
    const name =
      typeof constructor === 'function' ? (constructor as { name?: unknown }).name : undefined;
    if (typeof name !== 'string' || name === '' || name === 'Object') return 'an object';
    if (!BUILT_INS.has(name)) return `an instance of ${name}`;
    return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
  } catch {
    // A revoked Proxy, or one whose traps throw.
    return 'an object that cannot be inspected (a Proxy?)';
  }
}

function errorText(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name}: ${error.message}`;
  } catch {
    // A hostile error object: fall through to the safe description.
  }
  return `threw ${describeValue(error)}`;
}
