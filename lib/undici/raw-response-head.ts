import type { UndiciResponseHead } from './undici-circuit-breaker-options.interface.js';

type Headers = UndiciResponseHead['headers'];
type Parsed = Record<string, string | string[]>;
type RawHeaders = Buffer[] | string[] | null;

/**
 * A response's head as undici's handlers of the older API receive it (`fetch`
 * and `request()` use them): the headers are raw name and value pairs, parsed
 * when something first reads them. The default classifier looks at them for
 * 429 and 503 alone: other answers are never parsed here.
 *
 * @internal
 */
export class RawResponseHead implements UndiciResponseHead {
  readonly headers: Headers;
  private readonly parsed: Parsed;
  private readonly lazy: LazyHeaders;

  constructor(
    readonly status: number,
    raw: RawHeaders,
    readonly statusText: string | undefined,
  ) {
    this.parsed = Object.create(null) as Parsed;
    this.lazy = new LazyHeaders(raw);
    this.headers = new Proxy(this.parsed, this.lazy);
  }

  /** Parses the headers now and lets go of the raw ones: a head a listener keeps must not keep the socket's buffers. */
  detach(): void {
    this.lazy.fill(this.parsed);
  }
}

/**
 * The proxy's handler: the first operation of any kind fills its target with
 * the parsed headers, then every operation is the target's own, so the proxy
 * is the parsed object to whoever reads it.
 */
class LazyHeaders implements ProxyHandler<Parsed> {
  constructor(private raw: RawHeaders | undefined) {}

  fill(target: Parsed): void {
    const raw = this.raw;
    if (raw === undefined) return;
    this.raw = undefined;
    parseRawHeaders(raw, target);
  }

  get(target: Parsed, property: string | symbol): unknown {
    this.fill(target);
    return Reflect.get(target, property);
  }

  has(target: Parsed, property: string | symbol): boolean {
    this.fill(target);
    return Reflect.has(target, property);
  }

  ownKeys(target: Parsed): (string | symbol)[] {
    this.fill(target);
    return Reflect.ownKeys(target);
  }

  getOwnPropertyDescriptor(
    target: Parsed,
    property: string | symbol,
  ): PropertyDescriptor | undefined {
    this.fill(target);
    return Reflect.getOwnPropertyDescriptor(target, property);
  }

  set(target: Parsed, property: string | symbol, value: unknown): boolean {
    this.fill(target);
    return Reflect.set(target, property, value);
  }

  deleteProperty(target: Parsed, property: string | symbol): boolean {
    this.fill(target);
    return Reflect.deleteProperty(target, property);
  }

  defineProperty(
    target: Parsed,
    property: string | symbol,
    descriptor: PropertyDescriptor,
  ): boolean {
    this.fill(target);
    return Reflect.defineProperty(target, property, descriptor);
  }
}

/** As undici parses them: lower-case names, latin1 values, a repeated name's values in an array. */
export function parseRawHeaders(
  raw: RawHeaders,
  into: Parsed = Object.create(null) as Parsed,
): Headers {
  if (raw === null) return into;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = latin1(raw[i]!).toLowerCase();
    const value = latin1(raw[i + 1]!);
    const had = into[name];
    if (had === undefined) into[name] = value;
    else if (typeof had === 'string') into[name] = [had, value];
    else had.push(value);
  }
  return into;
}

function latin1(value: Buffer | string): string {
  return typeof value === 'string' ? value : value.toString('latin1');
}
