import type { CanActivate, ExecutionContext } from '@nestjs/common';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * Lets only this machine see the dashboard. A real application puts its own
 * operators' guard here (a session, a role, mTLS), or serves the dashboard
 * on an internal listener only: it shows every dependency and how it fails,
 * and with `control` it can take them out of service. A page of another
 * name that a DNS rebinding points at this machine connects from loopback
 * too: the dashboard's own Host check refuses it (see `allowedHosts`).
 */
export class LoopbackGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ socket?: { remoteAddress?: string } }>();
    return LOOPBACK.has(request.socket?.remoteAddress ?? '');
  }
}
