/** A host as a request names it (`Host`, `Origin`) or `allowedHosts` lists it, lower-cased. @internal */
export interface HostName {
  /** A name, an IPv4 address, or an IPv6 address in brackets (`[::1]`). */
  readonly name: string;
  readonly port: number | undefined;
}

/** An entry of `allowedHosts`: a host, with or without a port; a leading dot takes the domain and its subdomains. @internal */
export interface AllowedHost extends HostName {
  readonly subdomains: boolean;
}

/** Where a request arrived: what the page is served on, as its socket says. @internal */
export interface ServedOn {
  /** The local address of the connection (`::ffff:` removed from an IPv4 one). */
  readonly address: string | undefined;
  readonly port: number | undefined;
  readonly tls: boolean;
}

const LABEL = '[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?';
const HOST = new RegExp(`^(\\[[0-9a-f:.]+\\]|${LABEL}(?:\\.${LABEL})*)(?::(\\d{1,5}))?$`);
const LOOPBACK_V4 = /^127(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** `name[:port]` as `Host` carries it; `undefined` for anything else (a user part, a path, a bad port). @internal */
export function parseHost(text: string): HostName | undefined {
  const match = HOST.exec(text.toLowerCase());
  if (match === null) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65_535)) return undefined;
  return { name: match[1]!, port };
}

/** An entry of `allowedHosts`, or `undefined` if it is not one. @internal */
export function parseAllowedHost(text: string): AllowedHost | undefined {
  const subdomains = text.startsWith('.');
  const host = parseHost(subdomains ? text.slice(1) : text);
  if (host === undefined || (subdomains && host.name.startsWith('['))) return undefined;
  return { ...host, subdomains };
}

/** The names this machine always answers to: no DNS answer can point them elsewhere. */
function isLoopback(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || LOOPBACK_V4.test(name);
}

function allowedBy(entry: AllowedHost, host: HostName, defaultPort: number): boolean {
  if (entry.port !== undefined && entry.port !== (host.port ?? defaultPort)) return false;
  return host.name === entry.name || (entry.subdomains && host.name.endsWith(`.${entry.name}`));
}

/**
 * Whether a request's `Host` is one the dashboard answers to: a loopback
 * name or the address the connection arrived at, with the port it arrived
 * at, or an entry of `allowedHosts`. A page of another name that a DNS
 * rebinding points at this machine sends its own name, and is refused.
 *
 * @internal
 */
export function hostAllowed(
  host: HostName,
  served: ServedOn,
  allowed: readonly AllowedHost[],
): boolean {
  const defaultPort = served.tls ? 443 : 80;
  if (allowed.some((entry) => allowedBy(entry, host, defaultPort))) return true;
  // Through a unix socket there is no port to compare; only a proxy reaches it.
  if (served.port !== undefined && (host.port ?? defaultPort) !== served.port) return false;
  return isLoopback(host.name) || (served.address !== undefined && host.name === served.address);
}

/**
 * Whether a request's `Origin` is the page's: the origin of the host the
 * request names (`requestHost()`), or one of `allowedHosts`, for a proxy that
 * rewrites `Host` while the browser keeps its own origin.
 *
 * @internal
 */
export function originAllowed(
  origin: string,
  host: string | undefined,
  allowed: readonly AllowedHost[],
): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (host !== undefined && url.host === host.toLowerCase()) return true;
  const port = url.port === '' ? undefined : Number(url.port);
  const from = { name: url.hostname, port };
  return allowed.some((entry) => allowedBy(entry, from, url.protocol === 'https:' ? 443 : 80));
}

/** A request's headers, as Node gives them on HTTP/1.1 and HTTP/2. @internal */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The host a request is for, as both checks read it: the authority of an
 * absolute-form target (`GET http://name/path`, which RFC 9112 says wins
 * over `Host`), else HTTP/2's `:authority`, else `Host`. An absolute target
 * that is not http(s) names no host (`undefined`).
 *
 * @internal
 */
export function requestHost(headers: RequestHeaders, target?: string): string | undefined {
  if (target !== undefined && !target.startsWith('/') && target !== '*')
    return /^https?:\/\/([^/?#]*)/i.exec(target)?.[1];
  return first(headers[':authority']) ?? first(headers.host);
}

/** How many `Host` headers a request carried (Node keeps only the first in `headers`). @internal */
export function hostHeaderCount(rawHeaders: readonly string[] | undefined): number {
  let count = 0;
  for (let at = 0; at < (rawHeaders?.length ?? 0); at += 2)
    if (rawHeaders![at]!.toLowerCase() === 'host') count++;
  return count;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The local address as a `Host` names it: IPv6 in brackets, an IPv4-mapped one as IPv4. @internal */
export function addressAsHost(address: string | undefined): string | undefined {
  if (address === undefined || address === '') return undefined;
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4 !== null) return v4[1];
  return address.includes(':') ? `[${address.toLowerCase()}]` : address;
}
