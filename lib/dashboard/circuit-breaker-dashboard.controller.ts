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
  Post,
  Req,
  Res,
  ServiceUnavailableException,
  Sse,
  UnsupportedMediaTypeException,
  UseGuards,
  applyDecorators,
  type MessageEvent,
  type Type,
} from '@nestjs/common';
import type { Observable } from 'rxjs';
import { circuitBreakerDashboardMessages as messages } from './circuit-breaker-dashboard.messages.js';
import { CircuitBreakerDashboardService } from './circuit-breaker-dashboard.service.js';
import {
  CIRCUIT_BREAKER_DASHBOARD_OPTIONS,
  CIRCUIT_BREAKER_DASHBOARD_PAGE,
  CIRCUIT_BREAKER_DASHBOARD_TOKEN_HEADER,
  MAX_REASON_LENGTH,
} from './circuit-breaker-dashboard.constants.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import type { DashboardState } from './dashboard-view.interface.js';
import { dashboardPageHeaders, type DashboardPage } from './page/dashboard-page.js';
import {
  CircuitBreakerDashboardHostGuard,
  DashboardPageRoute,
} from './circuit-breaker-dashboard-host.guard.js';
import type {
  StreamConnection,
  StreamResponse,
  StreamSession,
  StreamSocket,
} from './dashboard-stream-connections.js';

/** What shapes the routes, decided when the module is defined; the rest is read from DI when they are used. @internal */
export interface DashboardRoutes {
  readonly path: string;
  readonly control: boolean;
  readonly maxPendingDataLength: number;
  /** What `@UseGuards()` gets: the user's guard (`forRoot()`), or the one that reads it from DI (`forRootAsync()`). */
  readonly guard: ResolvedDashboardOptions['guard'];
}

/** What a control request is read from, on Express and on Fastify alike. */
interface ControlRequest {
  headers: Record<string, string | string[] | undefined>;
}

/** A stream's request and reply, on Express (the Node objects) and on Fastify (`raw`, with `stream` over HTTP/2). */
interface StreamRequest {
  socket?: StreamSocket;
  raw?: { socket?: StreamSocket; stream?: { session?: StreamSession } };
}
type StreamReply = StreamResponse & { raw?: StreamResponse };

/** The connection a stream is sent on, when the platform shows it: over HTTP/2, its session. */
function connectionOf(request: StreamRequest, reply: StreamReply): StreamConnection | undefined {
  const socket = request.raw?.socket ?? request.socket;
  const response = reply.raw ?? reply;
  if (typeof socket?.end !== 'function' || typeof response.once !== 'function') return undefined;
  const session = request.raw?.stream?.session;
  return typeof session?.close === 'function'
    ? { socket, response, session }
    : { socket, response };
}

/**
 * The dashboard's routes, as controller classes made for one `forRoot()`:
 * its path, its guard and its stream bound are decided there, as decorators
 * need them. The control routes exist only with `control: true`.
 *
 * @internal
 */
export function dashboardControllers(routes: DashboardRoutes): Type[] {
  const { guarded, pageHeaders } = routeDecorators(routes);

  @Controller(routes.path)
  @guarded
  class CircuitBreakerDashboardController {
    constructor(
      @Inject(CircuitBreakerDashboardService)
      private readonly dashboard: CircuitBreakerDashboardService,
      @Inject(CIRCUIT_BREAKER_DASHBOARD_PAGE) private readonly dashboardPage: DashboardPage,
      @Inject(CIRCUIT_BREAKER_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    ) {}

    @Get()
    @DashboardPageRoute()
    @pageHeaders
    page(): string {
      return this.dashboardPage.html;
    }

    @Get('state')
    @Header('cache-control', 'no-store')
    @Header('x-content-type-options', 'nosniff')
    state(): DashboardState {
      return this.dashboard.state();
    }

    @Sse('stream', { maxPendingDataLength: routes.maxPendingDataLength })
    @Header('x-content-type-options', 'nosniff')
    stream(
      @Req() request: StreamRequest,
      @Res({ passthrough: true }) response: StreamReply,
    ): Observable<MessageEvent> {
      const stream = this.dashboard.stream(connectionOf(request, response));
      if (stream === 'too-many')
        throw new ServiceUnavailableException(messages.tooManyStreams(this.options.maxStreams));
      if (stream === 'closing') throw new ServiceUnavailableException(messages.shuttingDown);
      return stream;
    }
  }
  if (!routes.control) return [CircuitBreakerDashboardController];

  @Controller(routes.path)
  @guarded
  class CircuitBreakerDashboardControlController {
    private readonly token: Buffer;

    constructor(
      @Inject(CircuitBreakerDashboardService)
      private readonly dashboard: CircuitBreakerDashboardService,
      @Inject(CIRCUIT_BREAKER_DASHBOARD_PAGE) page: DashboardPage,
    ) {
      this.token = Buffer.from(page.token);
    }

    // The breaker's name travels in the JSON body: as a path segment, "." and ".." are removed by
    // every URL parser (and so is their percent-encoding), and routers bound a parameter's length.
    @Post('force')
    @HttpCode(204)
    force(@Req() request: ControlRequest, @Body() body: unknown): void {
      checkControl(request, this.token);
      const name = breakerOf(body);
      const state = field(body, 'state');
      const reason = field(body, 'reason');
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

    @Post('reset')
    @HttpCode(204)
    reset(@Req() request: ControlRequest, @Body() body: unknown): void {
      checkControl(request, this.token);
      const name = breakerOf(body);
      if (!this.dashboard.reset(name)) throw new NotFoundException(messages.unknownBreaker(name));
    }
  }
  return [CircuitBreakerDashboardController, CircuitBreakerDashboardControlController];
}

/** The guards of every route, and the page's headers. */
function routeDecorators(routes: DashboardRoutes) {
  // The Host check first: a request for another name is refused before the `guard` option's guard runs.
  const guarded =
    routes.guard === undefined
      ? UseGuards(CircuitBreakerDashboardHostGuard)
      : UseGuards(CircuitBreakerDashboardHostGuard, routes.guard);
  const pageHeaders = applyDecorators(
    ...Object.entries(dashboardPageHeaders()).map(([name, value]) => Header(name, value)),
  );
  return { guarded, pageHeaders };
}

/** A field of a JSON body, whatever the body is. */
function field(body: unknown, key: string): unknown {
  return typeof body === 'object' && body !== null && Object.hasOwn(body, key)
    ? (body as Record<string, unknown>)[key]
    : undefined;
}

/** The name of the breaker a control request is for: any non-empty string, as breaker names are. */
function breakerOf(body: unknown): string {
  const name = field(body, 'breaker');
  if (typeof name !== 'string' || name === '')
    throw new BadRequestException(messages.badBreaker(name));
  return name;
}

/**
 * Refuses what a page of another origin could send, beyond the Host guard's
 * checks of `Origin` and `Sec-Fetch-Site`: a control request must say it
 * comes from the page (`Sec-Fetch-Site: same-origin`, when the browser sends
 * it), carry the page's token, which no other origin can read, and be JSON,
 * which a form cannot send.
 */
function checkControl(request: ControlRequest, token: Buffer): void {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const site = header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin')
    throw new ForbiddenException(messages.crossSite);
  const given = Buffer.from(header(CIRCUIT_BREAKER_DASHBOARD_TOKEN_HEADER) ?? '');
  if (given.length !== token.length || !timingSafeEqual(given, token))
    throw new ForbiddenException(messages.badToken);
  if (!(header('content-type') ?? '').toLowerCase().startsWith('application/json'))
    throw new UnsupportedMediaTypeException(messages.notJson);
}
