import type { InternalAxiosRequestConfig } from 'axios';
import { originKeyOf } from '../request-origin.js';

// A scheme, then "//": what axios itself takes for an absolute URL (isAbsoluteURL).
const ABSOLUTE = /^([a-z][a-z\d+\-.]*:)?\/\//i;
// The origin of an absolute http(s) URL, up to where its path, query or fragment starts ("\" starts the
// path of these schemes too): a handful per process, so its key comes from originKeyOf's cache.
const HTTP_ORIGIN = /^https?:\/\/[^/\\?#]+/i;

/**
 * The origin a request goes to, `protocol//host:port` with the port always
 * written, as the undici client keys it (see `originKeyOf`), from its `url` and
 * `baseURL` joined as axios joins them. A URL that cannot be parsed is its
 * own key: the request fails in the adapter, and is counted there.
 *
 * @internal
 */
export function requestOrigin(config: InternalAxiosRequestConfig): string {
  const url = config.url ?? '';
  const base = config.baseURL;
  if (
    base === undefined ||
    base === '' ||
    (ABSOLUTE.test(url) && config.allowAbsoluteUrls !== false)
  )
    return originOf(url);
  // Joined with a "/", a relative URL cannot change the authority of an http(s) base: its key is the base's.
  if (base === lastBase) return lastKey;
  const origin = HTTP_ORIGIN.exec(base);
  if (origin !== null) {
    const key = originKeyOf(origin[0]);
    if (key !== undefined) {
      lastBase = base;
      lastKey = key;
      return key;
    }
  }
  return originOf(url === '' ? base : `${base.replace(/\/+$/, '')}/${url.replace(/^\/+/, '')}`);
}

// The base of the last request that had one: an instance's requests share theirs (HttpService's baseURL).
let lastBase: string | undefined = undefined;
let lastKey = '';

function originOf(full: string): string {
  // The common case without a URL parsed per request: its origin part parses as the whole URL's origin.
  const origin = HTTP_ORIGIN.exec(full);
  if (origin !== null) return originKeyOf(origin[0]) ?? full;
  try {
    // A relative URL in a browser goes to the page's own origin.
    return originKeyOf(
      new URL(full, (globalThis as { location?: { href?: string } }).location?.href),
    )!;
  } catch {
    return full;
  }
}
