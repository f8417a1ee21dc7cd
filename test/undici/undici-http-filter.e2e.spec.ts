import {
  BadGatewayException,
  Controller,
  Get,
  Inject,
  Module,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CallRejectedError,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
} from '../../lib/index.js';
import { withCircuitBreaker } from '../../lib/undici/index.js';

// fetch() through the dispatcher rejects with TypeError('fetch failed'), its cause the breaker's error: the module's
// httpFilter answers it as it answers the breaker's own errors, and leaves every other TypeError to Nest.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function upstream(status: number): Promise<{ url: string; calls: () => number }> {
  let calls = 0;
  const server: Server = createServer((_request, response) => {
    calls++;
    response.writeHead(status).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls };
}

const DISPATCHER = 'DISPATCHER';

async function app(upstreamUrl: string): Promise<string> {
  @Controller()
  class StockController {
    constructor(@Inject(DISPATCHER) private readonly dispatcher: Dispatcher) {}

    @Get('stock')
    async stock(): Promise<number> {
      const response = await fetch(`${upstreamUrl}/stock`, {
        dispatcher: this.dispatcher,
      } as RequestInit);
      return response.status;
    }

    @Get('bug')
    bug(): never {
      throw new TypeError('a bug of the application');
    }

    @Get('own')
    own(): never {
      // The application answers a refusal its own way: its exception, the refusal as its cause.
      throw new BadGatewayException('partners down', {
        cause: new CallRejectedError('partners', 'open', 'open', 30_000),
      });
    }
  }

  @Module({
    imports: [
      CircuitBreakerModule.forRoot({
        breakers: { partners: { consecutiveFailures: 1, openDurationMs: 30_000 } },
        httpFilter: true,
      }),
    ],
    controllers: [StockController],
    providers: [
      {
        provide: DISPATCHER,
        inject: [CircuitBreakerRegistry],
        useFactory: (registry: CircuitBreakerRegistry) =>
          new Agent().compose(withCircuitBreaker({ breaker: registry.get('partners') })),
      },
    ],
  })
  class AppModule {}

  const application: INestApplication = await NestFactory.create(AppModule, { logger: false });
  cleanups.push(() => application.close());
  cleanups.push(() => application.get<Dispatcher>(DISPATCHER).destroy());
  await application.listen(0, '127.0.0.1');
  return application.getUrl();
}

describe('httpFilter and fetch through the undici dispatcher', () => {
  it('answers a refusal that fetch wrapped with 503 and Retry-After, and sends nothing upstream', async () => {
    const server = await upstream(500);
    const url = await app(server.url);
    // The upstream's 500, counted: the breaker opens.
    expect(await (await fetch(`${url}/stock`)).text()).toBe('500');
    const refused = await fetch(`${url}/stock`);
    const body = (await refused.json()) as { statusCode: number };
    expect([
      refused.status,
      refused.headers.get('retry-after'),
      body.statusCode,
      server.calls(),
    ]).toEqual([503, '30', 503, 1]);
  });

  it("leaves the application's own exception to it, whatever its cause: its 502", async () => {
    const server = await upstream(200);
    const url = await app(server.url);
    const answer = await fetch(`${url}/own`);
    expect([answer.status, answer.headers.get('retry-after')]).toEqual([502, null]);
  });

  it('leaves any other TypeError to Nest: its own 500', async () => {
    const server = await upstream(200);
    const url = await app(server.url);
    const answer = await fetch(`${url}/bug`);
    expect([answer.status, await answer.json()]).toEqual([
      500,
      { statusCode: 500, message: 'Internal server error' },
    ]);
  });
});
