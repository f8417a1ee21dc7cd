import {
  ForbiddenException,
  Inject,
  Injectable,
  NotFoundException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { CIRCUIT_BREAKER_DASHBOARD_OPTIONS } from './circuit-breaker-dashboard.constants.js';
import { circuitBreakerDashboardMessages as messages } from './circuit-breaker-dashboard.messages.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import { addressAsHost, hostAllowed, parseHost, type ServedOn } from './dashboard-hosts.js';

/** What the check reads of a request, on Express (`req.socket`) and on Fastify (`request.raw.socket`). */
interface HostRequest {
  headers: Record<string, string | string[] | undefined>;
  socket?: RequestSocket;
  raw?: { socket?: RequestSocket };
}

interface RequestSocket {
  localAddress?: string;
  localPort?: number;
  encrypted?: boolean;
}

/**
 * Refuses every request of the dashboard (page, state, stream, controls)
 * whose `Host` is not one it is served on (`localhost`, `127.x.x.x`, `[::1]`
 * or the address the connection arrived at, with its port) nor one of
 * `allowedHosts`. A page that a DNS rebinding points at this machine keeps
 * its own name in `Host`: without this check, it could read the dashboard
 * and its token, and use its buttons, from the browser of an operator who
 * merely visited it. It runs before the user's guard.
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerDashboardHostGuard implements CanActivate {
  constructor(
    @Inject(CIRCUIT_BREAKER_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    // forRootAsync()'s routes exist even when its factory disabled the dashboard: they answer 404.
    if (!this.options.enabled) throw new NotFoundException();
    const request = context.switchToHttp().getRequest<HostRequest>();
    const socket = request.raw?.socket ?? request.socket;
    const served: ServedOn = {
      address: addressAsHost(socket?.localAddress),
      port: typeof socket?.localPort === 'number' ? socket.localPort : undefined,
      tls: socket?.encrypted === true,
    };
    const text = first(request.headers.host) ?? first(request.headers[':authority']);
    const host = text === undefined ? undefined : parseHost(text);
    if (host === undefined || !hostAllowed(host, served, this.options.allowedHosts))
      throw new ForbiddenException(messages.badHost(text, served.port));
    return true;
  }
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
