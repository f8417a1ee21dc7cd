import type { INestApplication } from '@nestjs/common';
import { UseFilters } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  CircuitBreakerExceptionFilter,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  RequireCircuitBreaker,
  UseCircuitBreaker,
} from '../../lib/index.js';
import { CircuitBreakerWsExceptionFilter } from '../../lib/websockets/index.js';
import { CapturingLogger } from '../helpers/nest-app.js';

// Nest applies no global filter to gateways (httpFilter: true does not reach them): bind one here.
@WebSocketGateway()
@UseFilters(CircuitBreakerExceptionFilter)
class QuotesGateway {
  @SubscribeMessage('quote')
  @RequireCircuitBreaker('quotes')
  quote() {
    return { event: 'quote', data: { price: 42 } };
  }

  @SubscribeMessage('refresh')
  @UseCircuitBreaker('quotes')
  refresh() {
    // The quote service hangs: the breaker's deadline ends the call.
    return new Promise(() => undefined);
  }
}

/** The same gateway with the subpath's filter, which also handles every other error as Nest does. */
@WebSocketGateway()
@UseFilters(new CircuitBreakerWsExceptionFilter())
class FilteredGateway {
  @SubscribeMessage('quote')
  @RequireCircuitBreaker('quotes')
  quote() {
    return { event: 'quote', data: { price: 42 } };
  }

  @SubscribeMessage('crash')
  crash() {
    throw new Error('unexpected');
  }
}

const apps: INestApplication[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  while (apps.length > 0) await apps.pop()!.close();
});

async function gateway(provider: unknown) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      CircuitBreakerModule.forRoot({
        breakers: { quotes: { consecutiveFailures: 1, openDurationMs: 30_000, timeoutMs: 50 } },
      }),
    ],
    providers: [provider as never],
  })
    .setLogger(new CapturingLogger())
    .compile();
  const app = moduleRef.createNestApplication({ logger: new CapturingLogger() });
  app.useWebSocketAdapter(new WsAdapter(app));
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('http', 'ws');
  const socket = new WebSocket(url);
  sockets.push(socket);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  /** Sends one message and resolves with the next message the server sends back. */
  const ask = (event: string) =>
    new Promise<unknown>((resolve) => {
      socket.once('message', (data) => resolve(JSON.parse(String(data))));
      socket.send(JSON.stringify({ event, data: {} }));
    });
  return { ask, registry: app.get(CircuitBreakerRegistry) };
}

describe('breaker errors over a WebSocket gateway (platform-ws)', () => {
  it('answers a rejected message with an exception carrying CIRCUIT_OPEN and retryAfterMs', async () => {
    const { ask, registry } = await gateway(QuotesGateway);
    expect(await ask('quote')).toEqual({ event: 'quote', data: { price: 42 } });
    registry.get('quotes').acquire().fail(new Error('quotes down'));
    const answer = (await ask('quote')) as { data: { retryAfterMs: number } };
    expect(answer).toEqual({
      event: 'exception',
      data: {
        status: 'error',
        code: 'CIRCUIT_OPEN',
        message: 'A dependency is unavailable; retry later.',
        retryAfterMs: expect.any(Number),
      },
    });
    expect(answer.data.retryAfterMs).toBeGreaterThan(25_000);
    expect(answer.data.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it("answers a handler past the breaker's deadline with CALL_TIMEOUT", async () => {
    const { ask } = await gateway(QuotesGateway);
    expect(await ask('refresh')).toEqual({
      event: 'exception',
      data: {
        status: 'error',
        code: 'CALL_TIMEOUT',
        message: 'A dependency did not answer in time; retry later.',
      },
    });
  });

  it("answers alike through the subpath's WsException filter, and other errors as Nest does", async () => {
    const { ask, registry } = await gateway(FilteredGateway);
    registry.get('quotes').isolate();
    expect(await ask('quote')).toEqual({
      event: 'exception',
      data: {
        status: 'error',
        code: 'CIRCUIT_OPEN',
        message: 'A dependency is unavailable; retry later.',
      },
    });
    expect(await ask('crash')).toMatchObject({
      event: 'exception',
      data: { status: 'error', message: 'Internal server error' },
    });
  });
});
