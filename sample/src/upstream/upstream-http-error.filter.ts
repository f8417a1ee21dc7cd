import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { UpstreamHttpError } from 'nestjs-circuit-breaker';

/**
 * What the sample's clients see when an upstream answered an error status
 * (thrown by `ensureOk()` after the breaker has classified it):
 * - 400 and 404 are answers about the client's own request: passed on, with
 *   the upstream's message;
 * - a dependency that asked for a pause (429 or 503 with `Retry-After`): 503,
 *   with the same `Retry-After`, so that the client backs off too;
 * - anything else is the dependency's failure, not the client's: 502.
 */
@Catch(UpstreamHttpError)
export class UpstreamHttpErrorFilter implements ExceptionFilter<UpstreamHttpError> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: UpstreamHttpError, host: ArgumentsHost): void {
    const adapter = this.adapterHost.httpAdapter;
    const response = host.switchToHttp().getResponse<unknown>();
    if (error.status === HttpStatus.BAD_REQUEST || error.status === HttpStatus.NOT_FOUND) {
      adapter.reply(
        response,
        { statusCode: error.status, message: upstreamMessage(error) },
        error.status,
      );
      return;
    }
    if (error.retryAfterMs !== undefined) {
      adapter.setHeader(response, 'Retry-After', String(Math.ceil(error.retryAfterMs / 1000)));
      adapter.reply(
        response,
        {
          statusCode: 503,
          error: 'Service Unavailable',
          message: 'A dependency is overloaded; retry later.',
        },
        503,
      );
      return;
    }
    adapter.reply(
      response,
      { statusCode: 502, error: 'Bad Gateway', message: 'A dependency failed.' },
      502,
    );
  }
}

/** The upstream's own `{ message }`, when its body was JSON that had one. */
function upstreamMessage(error: UpstreamHttpError): string {
  try {
    const body = JSON.parse(error.bodyExcerpt) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not JSON (or cut short): say what happened instead.
  }
  return error.message;
}
