import { closestName } from './closest-name.js';
import { optionMessages } from './option.messages.js';

/** Builds the error an invalid option throws; `option` is the option's path relative to its subject. @internal */
export type OptionErrorFactory = (message: string, option: string) => Error;

/** The bounds of a numeric option; `max` defaults to `Number.MAX_SAFE_INTEGER`, so Infinity is refused unless asked for. */
export interface NumberRule {
  readonly min?: number;
  /** `min` itself is refused (a positive duration). */
  readonly minExclusive?: boolean;
  readonly max?: number;
  readonly integer?: boolean;
}

/**
 * The one place where the options of every surface of the package (engine,
 * Nest module, decorator, operator, Redis store, metric modules) are read and
 * checked, parameterised by the subject that messages name.
 *
 * Options may come from configuration files, environment variables and
 * factories, so they are read defensively: a value is read once, into a plain
 * copy the later checks work on, and whatever reading it throws (a getter, a
 * Proxy trap) becomes an error naming the option instead of escaping as an
 * unrelated crash. An option whose value is `undefined` counts as not given.
 *
 * @internal
 */
export class OptionChecker {
  constructor(
    /** Who the options belong to, as messages start: `Circuit breaker "payments"`, `RedisBreakerStore`. */
    readonly subject: string,
    private readonly error: OptionErrorFactory = (message) => new TypeError(message),
    /** Where the user wrote an option (`breakers.payments.timeoutMs`), from its path relative to the subject. */
    readonly pathOf: (option: string) => string = (option) => option,
  ) {}

  fail(option: string, detail: string): never {
    throw this.error(optionMessages.conflicting(this.subject, detail), option);
  }

  invalid(option: string, value: unknown, expected: string, optional = true): never {
    throw this.error(
      optionMessages.invalid(this.subject, this.pathOf(option), value, expected, optional),
      option,
    );
  }

  /** An option nobody knows: the error names it, the known ones, and the closest of them when it looks like a typo. */
  unknown(option: string, known: readonly string[]): never {
    const paths = known.map((key) => this.pathOf(key));
    const path = this.pathOf(option);
    throw this.error(
      optionMessages.unknown(this.subject, path, paths, closestName(path, paths)),
      option,
    );
  }

  /** Reads `owner[key]`; a throwing getter or Proxy trap becomes an error naming the option. */
  read(owner: object, key: string, option: string): unknown {
    try {
      return (owner as Record<string, unknown>)[key];
    } catch (error) {
      throw this.error(optionMessages.unreadable(this.subject, this.pathOf(option), error), option);
    }
  }

  /**
   * A plain object (an object literal, or `Object.create(null)`) with only
   * `known` keys, copied. Arrays, Dates, Maps and class instances are refused:
   * their fields would silently be no options at all. Keys whose value is
   * `undefined` are left out of the copy.
   *
   * `option` is the object's own path (`halfOpen`), `''` for the top level.
   */
  record(
    option: string,
    value: unknown,
    known: readonly string[],
    expected = 'an object',
    optional = true,
  ): Record<string, unknown> {
    const self = option === '' ? 'options' : option;
    if (!this.isPlainObject(self, value)) this.invalid(self, value, expected, optional);
    const copy: Record<string, unknown> = {};
    for (const key of this.ownKeys(self, value)) {
      if (typeof key === 'symbol' || !known.includes(key)) {
        const at = (name: string) => (option === '' ? name : `${option}.${name}`);
        this.unknown(at(typeof key === 'symbol' ? `[${key.toString()}]` : key), known.map(at));
      }
      let read: unknown;
      try {
        read = (value as Record<string, unknown>)[key];
      } catch (error) {
        // As read() reports it; the path is made only for an error.
        const path = option === '' ? key : `${option}.${key}`;
        throw this.error(optionMessages.unreadable(this.subject, this.pathOf(path), error), path);
      }
      if (read !== undefined) copy[key] = read;
    }
    return copy;
  }

  /** A plain object of any string keys (a record of name → value), as `[key, value]` pairs read once; `undefined` values left out. */
  entries(option: string, value: unknown, expected: string, optional = true): [string, unknown][] {
    if (!this.isPlainObject(option, value)) this.invalid(option, value, expected, optional);
    const entries: [string, unknown][] = [];
    for (const key of this.ownKeys(option, value)) {
      if (typeof key === 'symbol')
        this.invalid(
          option,
          value,
          `${expected} (a symbol key ${key.toString()} names nothing)`,
          optional,
        );
      const read = this.read(value, key, `${option}${pathKey(key)}`);
      if (read !== undefined) entries.push([key, read]);
    }
    return entries;
  }

  /** `record()`, or `undefined` when the option is not given. */
  optionalRecord(
    option: string,
    value: unknown,
    known: readonly string[],
    expected = 'an object',
  ): Record<string, unknown> | undefined {
    return value === undefined ? undefined : this.record(option, value, known, expected);
  }

  number(
    option: string,
    value: unknown,
    rule: NumberRule,
    expected: string,
    optional = true,
  ): number {
    const {
      min = -Number.MAX_VALUE,
      max = Number.MAX_SAFE_INTEGER,
      integer = false,
      minExclusive = false,
    } = rule;
    if (
      typeof value !== 'number' ||
      Number.isNaN(value) ||
      (minExclusive ? value <= min : value < min) ||
      value > max ||
      (max !== Infinity && !Number.isFinite(value)) ||
      (integer && !Number.isSafeInteger(value))
    ) {
      this.invalid(option, value, expected, optional);
    }
    return value;
  }

  boolean(option: string, value: unknown, optional = true): boolean {
    if (typeof value !== 'boolean') this.invalid(option, value, 'a boolean', optional);
    return value;
  }

  string(
    option: string,
    value: unknown,
    expected: string,
    valid: (value: string) => boolean = () => true,
    optional = true,
  ): string {
    if (typeof value !== 'string' || !valid(value)) this.invalid(option, value, expected, optional);
    return value;
  }

  func<F>(option: string, value: unknown, expected = 'a function', optional = true): F {
    if (typeof value !== 'function') this.invalid(option, value, expected, optional);
    return value as F;
  }

  oneOf<T extends string>(
    option: string,
    value: unknown,
    values: readonly T[],
    optional = true,
  ): T {
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
      this.invalid(
        option,
        value,
        values
          .map((v) => `'${v}'`)
          .join(', ')
          .replace(/, ([^,]*)$/, ' or $1'),
        optional,
      );
    }
    return value as T;
  }

  /** An object (class instances welcome: clients, registries) with these methods, duck-typed and read safely. */
  service<T>(
    option: string,
    value: unknown,
    methods: readonly string[],
    expected: string,
    optional = true,
  ): T {
    if (typeof value !== 'object' || value === null)
      this.invalid(option, value, expected, optional);
    for (const method of methods)
      if (typeof this.read(value, method, option) !== 'function')
        this.invalid(option, value, expected, optional);
    return value as T;
  }

  /** The enumerable own keys, symbols included (a symbol key names no option: it must not pass unnoticed). */
  private ownKeys(option: string, value: object): (string | symbol)[] {
    try {
      // Reflect.ownKeys()'s order (strings, then symbols), without its cost for the usual case: no symbol.
      const keys: (string | symbol)[] = Object.keys(value);
      for (const symbol of Object.getOwnPropertySymbols(value))
        if (propertyIsEnumerable.call(value, symbol)) keys.push(symbol);
      return keys;
    } catch (error) {
      throw this.error(optionMessages.unreadable(this.subject, this.pathOf(option), error), option);
    }
  }

  /** Whether `value` is an object literal (or `Object.create(null)`); a Proxy whose traps throw is an error naming the option. */
  isPlainObject(option: string, value: unknown): value is object {
    if (typeof value !== 'object' || value === null) return false;
    try {
      if (Array.isArray(value)) return false;
      const proto: unknown = Object.getPrototypeOf(value);
      // The last case is a plain object of another realm (vm), whose Object.prototype is not ours.
      return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
    } catch (error) {
      throw this.error(optionMessages.unreadable(this.subject, this.pathOf(option), error), option);
    }
  }
}

const { propertyIsEnumerable } = Object.prototype;

/** `.name`, or `["a.b"]` for a key that would read as a path. @internal */
export function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
