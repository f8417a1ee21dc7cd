import type { UndiciResponseHead } from './undici-circuit-breaker-options.interface.js';

type Headers = UndiciResponseHead['headers'];
type Parsed = Record<string, string | string[]>;
type RawHeaders = Buffer[] | string[] | null;

/**
 * A response's head as undici's handlers of the older API receive it (`fetch`
 * and `request()` use them): the headers are raw name and value pairs, parsed
 * into a plain object (as undici's own) when something first reads them. The
 * default classifier reads them only beside a status that can fail (5xx, 408,
 * 429): a success is never parsed here, unless a subscriber of settled calls
 * (which may keep the head) or a `classifyResult` reads them.
 *
 * @internal
 */
export class RawResponseHead implements UndiciResponseHead {
  private parsed: Headers | undefined = undefined;

  constructor(
    readonly status: number,
    private raw: RawHeaders | undefined,
    readonly statusText: string | undefined,
  ) {}

  get headers(): Headers {
    if (this.parsed === undefined) {
      this.parsed = parseRawHeaders(this.raw ?? null, {});
      this.raw = undefined;
    }
    return this.parsed;
  }

  /** Parses the headers now and lets go of the raw ones: a head a listener keeps must not keep the socket's buffers. */
  detach(): void {
    void this.headers;
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
