import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CallTimeoutError, CircuitOpenError } from './core/index.js';

/** The JSON body of a 503 for a rejected call. @publicApi */
export interface CircuitOpenResponseBody {
  statusCode: 503;
  error: 'Service Unavailable';
  message: string;
  breaker: string;
  reason: CircuitOpenError['reason'];
  retryAfterMs?: number;
}

/** The JSON body of a 504 for a call that timed out. @publicApi */
export interface CallTimeoutResponseBody {
  statusCode: 504;
  error: 'Gateway Timeout';
  message: string;
  breaker: string;
  timeoutMs: number;
}

/**
 * Maps a `CircuitOpenError` to **503 Service Unavailable** with a `Retry-After`
 * header (seconds, rounded up; none for an isolated breaker), and a
 * `CallTimeoutError` to **504 Gateway Timeout**, both with a JSON body naming
 * the breaker. Other errors never reach it, so they keep Nest's default
 * handling. HTTP only; works on Express and Fastify through the HTTP adapter.
 *
 * Register it with `forRoot({ httpFilter: true })`, `app.useGlobalFilters()`,
 * or `@UseFilters()` on a controller.
 *
 * @publicApi
 */
@Catch(CircuitOpenError, CallTimeoutError)
export class CircuitBreakerExceptionFilter implements ExceptionFilter<CircuitOpenError | CallTimeoutError> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: CircuitOpenError | CallTimeoutError, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const adapter = this.adapterHost.httpAdapter;
    const response = host.switchToHttp().getResponse<unknown>();
    if (exception instanceof CircuitOpenError) {
      const body: CircuitOpenResponseBody = {
        statusCode: HttpStatus.SERVICE_UNAVAILABLE,
        error: 'Service Unavailable',
        message: exception.message,
        breaker: exception.breakerName,
        reason: exception.reason,
        ...(exception.retryAfterMs === undefined ? {} : { retryAfterMs: exception.retryAfterMs }),
      };
      if (exception.retryAfterMs !== undefined) adapter.setHeader(response, 'Retry-After', String(Math.max(0, Math.ceil(exception.retryAfterMs / 1000))));
      adapter.reply(response, body, HttpStatus.SERVICE_UNAVAILABLE);
      return;
    }
    const body: CallTimeoutResponseBody = {
      statusCode: HttpStatus.GATEWAY_TIMEOUT,
      error: 'Gateway Timeout',
      message: exception.message,
      breaker: exception.breakerName,
      timeoutMs: exception.timeoutMs,
    };
    adapter.reply(response, body, HttpStatus.GATEWAY_TIMEOUT);
  }
}
