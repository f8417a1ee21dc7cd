import { breakerMessages } from '../errors/breaker.messages.js';
import { codeHeaderOf, retryAfterFromHeaders } from './classify.js';

/**
 * What `UpstreamHttpError.from()` and `ensureOk()` read of an HTTP response: a
 * fetch `Response` (Node's, undici's, a polyfill's) fits.
 *
 * @publicApi
 */
export interface UpstreamResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText?: string;
  readonly url?: string;
  readonly headers: { get(name: string): string | null };
  readonly body?: { getReader(): UpstreamBodyReader } | null;
}

/** The part of a `ReadableStreamDefaultReader` the excerpt needs. @publicApi */
export interface UpstreamBodyReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
}

/** Characters of the answer kept in `bodyExcerpt`. */
const EXCERPT_CHARS = 500;
/** Bytes read at most to build it: the rest of the body is discarded, not downloaded. */
const EXCERPT_BYTES = 4_096;

/**
 * A dependency answered with an HTTP error status. Built from a fetch
 * `Response` by `UpstreamHttpError.from(response)` or `ensureOk(response)`, it
 * keeps what the default classification needs and `new Error(...)` or
 * `new HttpException(message, res.status)` lose: `status` (a 429 is `overload`,
 * not a failure; a 404 a success) and `retryAfterMs`, the dependency's
 * pause hint (`retry-after-ms`, `x-ms-retry-after-ms`, `Retry-After`, or the
 * IETF `RateLimit` fields, as `retryAfterOf()` reads them), which pauses the
 * breaker for that long.
 *
 * - `url`: the response's URL without query, fragment or credentials (they
 *   may hold secrets, and this error ends up in logs and health details);
 * - `bodyExcerpt`: at most 500 characters of the answer, for logs and for an
 *   exception filter that wants the upstream's own message. Only the first
 *   4 KiB are read; the rest is cancelled, which frees the connection;
 * - `upstreamCode`: the `circuit-breaker-code` header of the answer, when it
 *   has one: `LOAD_SHED` from a concurrency limiter of this package, which
 *   makes a 503 an overload that asks for no pause.
 *
 * @publicApi
 */
export class UpstreamHttpError extends Error {
  declare readonly name: 'UpstreamHttpError';
  readonly code = 'UPSTREAM_HTTP' as const;

  constructor(
    readonly status: number,
    readonly statusText: string,
    readonly url: string,
    readonly retryAfterMs: number | undefined,
    readonly bodyExcerpt: string,
    readonly upstreamCode?: string,
  ) {
    super(breakerMessages.upstreamAnswered(url, status, statusText));
  }

  /**
   * The error for a response, with a short excerpt of its body. `now` is the
   * wall time an HTTP-date `Retry-After` is measured from (default `Date.now()`).
   * Never rejects: a body that cannot be read gives an empty excerpt.
   */
  static async from(
    response: UpstreamResponse,
    options: { now?: number } = {},
  ): Promise<UpstreamHttpError> {
    const retryAfterMs = retryAfterFromHeaders(response.headers, options.now ?? Date.now());
    return new UpstreamHttpError(
      response.status,
      response.statusText ?? '',
      publicUrl(response.url),
      retryAfterMs,
      await excerptOf(response),
      codeHeaderOf(response.headers),
    );
  }
}
Object.defineProperty(UpstreamHttpError.prototype, 'name', { value: 'UpstreamHttpError' });

/**
 * Returns a response whose status is 2xx, and throws an `UpstreamHttpError`
 * (status, `Retry-After`, URL, body excerpt) for any other:
 *
 * ```ts
 * const res = await ensureOk(await fetch(url, { signal }));
 * return res.json();
 * ```
 *
 * @publicApi
 */
export async function ensureOk<R extends UpstreamResponse>(
  response: R,
  options: { now?: number } = {},
): Promise<R> {
  if (response.ok) return response;
  throw await UpstreamHttpError.from(response, options);
}

function publicUrl(url: string | undefined): string {
  if (url === undefined || url === '') return '';
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    // Not an absolute URL: keep what cannot carry a query.
    return url.split(/[?#]/, 1)[0] ?? '';
  }
}

async function excerptOf(response: UpstreamResponse): Promise<string> {
  let reader: UpstreamBodyReader | undefined;
  try {
    reader = response.body?.getReader();
    if (reader === undefined) return '';
    const decoder = new TextDecoder();
    let text = '';
    let bytes = 0;
    while (bytes < EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done || value === undefined) break;
      bytes += value.byteLength;
      text += decoder.decode(value, { stream: true });
    }
    text = (text + decoder.decode()).trim();
    return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS - 1)}…` : text;
  } catch {
    // An aborted or broken body leaves nothing to show; the status is what counts.
    return '';
  } finally {
    // Unread bytes hold the connection until they are consumed or cancelled.
    try {
      reader?.cancel().catch(() => undefined);
    } catch {
      // A reader that cannot even be cancelled has nothing left to free.
    }
  }
}
