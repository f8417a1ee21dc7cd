import {
  BadRequestException,
  ForbiddenException,
  Inject,
  Injectable,
  NotFoundException,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CIRCUIT_BREAKER_DASHBOARD_OPTIONS } from './circuit-breaker-dashboard.constants.js';
import { circuitBreakerDashboardMessages as messages } from './circuit-breaker-dashboard.messages.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import {
  addressAsHost,
  hostAllowed,
  hostHeaderCount,
  originAllowed,
  parseHost,
  requestHost,
  type RequestHeaders,
  type ServedOn,
} from './dashboard-hosts.js';

/** What the check reads of a request, on Express (the Node request) and on Fastify (`request.raw`). */
interface HostRequest {
  headers: RequestHeaders;
  socket?: RequestSocket;
  url?: string;
  originalUrl?: string;
  rawHeaders?: string[];
  raw?: { socket?: RequestSocket; url?: string; rawHeaders?: string[] };
}

interface RequestSocket {
  localAddress?: string;
  localPort?: number;
  encrypted?: boolean;
}

/** The response's headers, set before any answer (Express's response, Fastify's `reply.raw`). */
interface HeaderResponse {
  setHeader?(name: string, value: string): unknown;
  raw?: { setHeader?(name: string, value: string): unknown };
}

const PAGE_ROUTE = 'circuit-breaker-dashboard:page';

/** Marks the route of the page itself: the one a link from another site may navigate to. @internal */
export const DashboardPageRoute = () => SetMetadata(PAGE_ROUTE, true);

/**
 * Refuses every request of the dashboard (page, state, stream, controls)
 * whose host (`requestHost()`) is not one it is served on (`localhost`,
 * `127.x.x.x`, `[::1]` or the address the connection arrived at, with its
 * port) nor one of `allowedHosts`. A page that a DNS rebinding points at
 * this machine keeps its own name in `Host`: without this check, it could
 * read the dashboard and its token, and use its buttons, from the browser
 * of an operator who merely visited it.
 *
 * It then refuses what another origin sends, whatever CORS the application
 * enables: an `Origin` that is not the page's, and a `Sec-Fetch-Site` of
 * `cross-site` or `same-site`, except a navigation to the page itself.
 * It runs before the `guard` option's guard (global guards run first).
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerDashboardHostGuard implements CanActivate {
  constructor(
    @Inject(CIRCUIT_BREAKER_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    // On every answer, refusals included: no other origin may embed or sniff what the dashboard sends.
    const response = http.getResponse<HeaderResponse>();
    const target = response.raw ?? response;
    target.setHeader?.('x-content-type-options', 'nosniff');
    target.setHeader?.('cross-origin-resource-policy', 'same-origin');
    // forRootAsync()'s routes exist even when its factory disabled the dashboard: they answer 404.
    if (!this.options.enabled) throw new NotFoundException();
    const request = http.getRequest<HostRequest>();
    const text = this.checkHost(request);
    const page = this.reflector.get<boolean | undefined>(PAGE_ROUTE, context.getHandler()) === true;
    this.checkOrigin(request.headers, text, page);
    return true;
  }

  /** The host the request names, once it is one the dashboard answers to. */
  private checkHost(request: HostRequest): string | undefined {
    const raw = request.raw ?? request;
    // RFC 9112: a request with more than one Host is answered 400.
    if (hostHeaderCount(raw.rawHeaders) > 1) throw new BadRequestException(messages.duplicateHost);
    const socket = raw.socket;
    const served: ServedOn = {
      address: addressAsHost(socket?.localAddress),
      port: typeof socket?.localPort === 'number' ? socket.localPort : undefined,
      tls: socket?.encrypted === true,
    };
    const text = requestHost(request.headers, request.originalUrl ?? raw.url);
    const host = text === undefined ? undefined : parseHost(text);
    if (host === undefined || !hostAllowed(host, served, this.options.allowedHosts))
      throw new ForbiddenException(messages.badHost(text, served.port));
    return text;
  }

  private checkOrigin(headers: RequestHeaders, host: string | undefined, page: boolean): void {
    const header = (name: string) => {
      const value = headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const site = header('sec-fetch-site');
    const navigation = page && header('sec-fetch-mode') === 'navigate';
    if ((site === 'cross-site' || site === 'same-site') && !navigation)
      throw new ForbiddenException(messages.crossSite);
    const origin = header('origin');
    if (origin !== undefined && !originAllowed(origin, host, this.options.allowedHosts))
      throw new ForbiddenException(messages.crossSite);
  }
}
