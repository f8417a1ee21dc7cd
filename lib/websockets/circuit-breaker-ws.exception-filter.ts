import { Catch, type ArgumentsHost } from '@nestjs/common';
import { BaseWsExceptionFilter } from '@nestjs/websockets';
import { toWsException } from './circuit-breaker-ws.mapping.js';

/**
 * A gateway's exception filter (`@UseFilters(new CircuitBreakerWsExceptionFilter())`,
 * or `app.useGlobalFilters()`): a `CircuitOpenError` or `CallTimeoutError`
 * becomes its `WsException`, so the client gets an `exception` message whose
 * data is `{ status: 'error', code: 'CIRCUIT_OPEN' | 'CALL_TIMEOUT', message,
 * retryAfterMs? }`; every other error is handled as `BaseWsExceptionFilter`
 * handles it. (The module's filter, `forRoot({ httpFilter: true })`, answers
 * gateways alike.)
 *
 * @publicApi
 */
@Catch()
export class CircuitBreakerWsExceptionFilter extends BaseWsExceptionFilter {
  constructor(private readonly breakerOptions: { details?: boolean } = {}) {
    super();
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    super.catch(toWsException(exception, this.breakerOptions) ?? exception, host);
  }
}
