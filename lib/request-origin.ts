const DEFAULT_PORTS: Readonly<Record<string, string>> = {
  'http:': '80',
  'https:': '443',
  'ws:': '80',
  'wss:': '443',
};
// Origins parsed already: a process talks to a handful, and parsing a URL per request is not free.
const keys = new Map<string, string>();
const MAX_CACHED = 1024;

/**
 * The key of a request's origin, `protocol//host:port` with the port always
 * written (`https://api.example.com:443`), so that one target has one key
 * whether or not its URL named the default port. `undefined` for a request
 * without an origin the URL parser accepts.
 *
 * @internal
 */
export function originKeyOf(origin: string | URL | undefined): string | undefined {
  if (origin === undefined) return undefined;
  if (typeof origin !== 'string') return keyOfUrl(origin);
  const cached = keys.get(origin);
  if (cached !== undefined) return cached;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  const key = keyOfUrl(url);
  if (keys.size >= MAX_CACHED) keys.clear();
  keys.set(origin, key);
  return key;
}

function keyOfUrl(url: URL): string {
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : url.port;
  return port === undefined
    ? `${url.protocol}//${url.host}`
    : `${url.protocol}//${url.hostname}:${port}`;
}
