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
  ConcurrencyLimit,
} from '../../lib/index.js';
import { deferred } from '../helpers/deferred.js';
import { CapturingLogger } from '../helpers/nest-app.js';

const held = deferred<number>();
const started = deferred<void>();

// Nest applies no global filter to gateways: bind the package's one filter here.
@WebSocketGateway()
@UseFilters(CircuitBreakerExceptionFilter)
@ConcurrencyLimit('quotes')
class QuotesGateway {
  @SubscribeMessage('quote')
  async quote() {
    started.resolve();
    return { event: 'quote', data: { price: await held.promise } };
  }
}

const apps: INestApplication[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  while (apps.length > 0) await apps.pop()!.close();
});

describe('ConcurrencyLimitInterceptor over a WebSocket gateway (platform-ws)', () => {
  it('answers a shed message with an exception carrying LOAD_SHED, and frees the place', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({
          limiters: { quotes: { algorithm: 'fixed', initialLimit: 1, maxQueue: 0 } },
        }),
      ],
      providers: [QuotesGateway],
    })
      .setLogger(new CapturingLogger())
      .compile();
    const app = moduleRef.createNestApplication({ logger: new CapturingLogger() });
    app.useWebSocketAdapter(new WsAdapter(app));
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const socket = new WebSocket((await app.getUrl()).replace('http', 'ws'));
    sockets.push(socket);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const answers: unknown[] = [];
    socket.on('message', (data) => answers.push(JSON.parse(String(data))));
    const send = () => socket.send(JSON.stringify({ event: 'quote', data: {} }));

    send();
    await started.promise;
    send();
    await expect.poll(() => answers.length).toBe(1);
    held.resolve(42);
    await expect.poll(() => answers.length).toBe(2);
    expect(answers).toEqual([
      {
        event: 'exception',
        data: {
          status: 'error',
          code: 'LOAD_SHED',
          message: 'The service is overloaded; retry later.',
        },
      },
      { event: 'quote', data: { price: 42 } },
    ]);
    expect(app.get(CircuitBreakerRegistry).limiter('quotes').snapshot()).toMatchObject({
      inFlight: 0,
      admitted: 1,
      shed: 1,
    });
  });
});
