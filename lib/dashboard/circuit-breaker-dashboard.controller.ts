import { timingSafeEqual } from 'node:crypto';
import {
  BadRequestException,
  Body,
  Controller,
  ForbiddenException,
  Get,
  Header,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Req,
  ServiceUnavailableException,
  Sse,
  UnsupportedMediaTypeException,
  UseGuards,
  applyDecorators,
  type MessageEvent,
  type Type,
} from '@nestjs/common';
import type { Observable } from 'rxjs';
import {
  MAX_REASON_LENGTH,
  CIRCUIT_BREAKER_DASHBOARD_TOKEN_HEADER,
} from './circuit-breaker-dashboard.constants.js';
import { circuitBreakerDashboardMessages as messages } from './circuit-breaker-dashboard.messages.js';
import { CircuitBreakerDashboardService } from './circuit-breaker-dashboard.service.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import type { DashboardState } from './dashboard-view.interface.js';
import type { DashboardPage } from './page/dashboard-page.js';

/** What a control request is read from, on Express and on Fastify alike. */
interface ControlRequest {
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The dashboard's routes, as controller classes made for one `forRoot()`:
 * its path, its guard, its stream bound and its page are decided there. The
 * control routes exist only with `control: true`.
 *
 * @internal
 */
export function dashboardControllers(
  options: ResolvedDashboardOptions,
  page: DashboardPage,
  token: string,
): Type[] {
  const guarded = options.guard === undefined ? applyDecorators() : UseGuards(options.guard);
  const pageHeaders = applyDecorators(
    ...Object.entries(page.headers).map(([name, value]) => Header(name, value)),
  );

  @Controller(options.path)
  @guarded
  class CircuitBreakerDashboardController {
    constructor(
      @Inject(CircuitBreakerDashboardService)
      private readonly dashboard: CircuitBreakerDashboardService,
    ) {}

    @Get()
    @pageHeaders
    page(): string {
      return page.html;
    }

    @Get('state')
    @Header('cache-control', 'no-store')
    state(): DashboardState {
      return this.dashboard.state();
    }

    @Sse('stream', { maxPendingDataLength: options.maxPendingDataLength })
    stream(): Observable<MessageEvent> {
      const stream = this.dashboard.stream();
      if (stream === 'too-many')
        throw new ServiceUnavailableException(messages.tooManyStreams(options.maxStreams));
      if (stream === 'closing') throw new ServiceUnavailableException(messages.shuttingDown);
      return stream;
    }
  }
  if (!options.control) return [CircuitBreakerDashboardController];

  const expected = Buffer.from(token);
  @Controller(options.path)
  @guarded
  class CircuitBreakerDashboardControlController {
    constructor(
      @Inject(CircuitBreakerDashboardService)
      private readonly dashboard: CircuitBreakerDashboardService,
    ) {}

    @Post('breakers/:name/force')
    @HttpCode(204)
    force(
      @Req() request: ControlRequest,
      @Param('name') name: string,
      @Body() body: unknown,
    ): void {
      checkOrigin(request, expected);
      const { state, reason } = (body ?? {}) as { state?: unknown; reason?: unknown };
      if (state !== 'open' && state !== 'closed')
        throw new BadRequestException(messages.badForceState(state));
      if (
        reason !== undefined &&
        (typeof reason !== 'string' || reason.trim() === '' || reason.length > MAX_REASON_LENGTH)
      )
        throw new BadRequestException(messages.badReason(MAX_REASON_LENGTH));
      if (!this.dashboard.force(name, state, reason ?? messages.defaultReason))
        throw new NotFoundException(messages.unknownBreaker(name));
    }

    @Post('breakers/:name/reset')
    @HttpCode(204)
    reset(@Req() request: ControlRequest, @Param('name') name: string): void {
      checkOrigin(request, expected);
      if (!this.dashboard.reset(name)) throw new NotFoundException(messages.unknownBreaker(name));
    }
  }
  return [CircuitBreakerDashboardController, CircuitBreakerDashboardControlController];
}

/**
 * Refuses what a page of another origin could send: a browser states where a
 * request comes from (`Sec-Fetch-Site`, `Origin`), a form cannot send JSON nor
 * set a header, and no other origin can read the page to learn its token.
 */
function checkOrigin(request: ControlRequest, token: Buffer): void {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const site = header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin')
    throw new ForbiddenException(messages.crossSite);
  const origin = header('origin');
  if (origin !== undefined && hostOf(origin) !== header('host'))
    throw new ForbiddenException(messages.crossSite);
  const given = Buffer.from(header(CIRCUIT_BREAKER_DASHBOARD_TOKEN_HEADER) ?? '');
  if (given.length !== token.length || !timingSafeEqual(given, token))
    throw new ForbiddenException(messages.badToken);
  if (!(header('content-type') ?? '').toLowerCase().startsWith('application/json'))
    throw new UnsupportedMediaTypeException(messages.notJson);
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
