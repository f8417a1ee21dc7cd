import type { AddressInfo, Server } from 'node:net';
import { Controller, type INestMicroservice } from '@nestjs/common';
import {
  ClientProxyFactory,
  EventPattern,
  MessagePattern,
  RpcException,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { firstValueFrom, timeout, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Breaker,
  circuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  RequireCircuitBreaker,
  UseCircuitBreaker,
  type BreakerOptions,
} from '../../lib/index.js';
import {
  CircuitBreakerRpcExceptionFilter,
  classifyRpcError,
} from '../../lib/microservices/index.js';
import { CapturingLogger } from '../helpers/nest-app.js';

@Controller()
class LedgerController {
  @MessagePattern('balance')
  @RequireCircuitBreaker('ledger')
  balance(account: string) {
    return { account, balance: 10 };
  }

  @MessagePattern('post')
  @UseCircuitBreaker('ledger')
  post() {
    // The ledger hangs: the breaker's deadline ends the call.
    return new Promise(() => undefined);
  }

  @MessagePattern('invalid')
  invalid() {
    throw new RpcException({ statusCode: 400, message: 'account must be a string' });
  }

  @MessagePattern('crash')
  crash() {
    throw new Error('null pointer');
  }

  @MessagePattern('hang')
  hang() {
    return new Promise(() => undefined);
  }

  @EventPattern('audit')
  audit(_event: unknown) {}
}

const started: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  while (started.length > 0) await started.pop()!.close();
});

/** A TCP microservice on a port the OS picks, and a real client of it. */
async function microservice(
  module: { httpFilter?: boolean; filter?: 'subpath' } = { httpFilter: true },
) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      CircuitBreakerModule.forRoot({
        httpFilter: module.httpFilter,
        breakers: { ledger: { consecutiveFailures: 1, openDurationMs: 30_000, timeoutMs: 50 } },
      }),
    ],
    controllers: [LedgerController],
  })
    .setLogger(new CapturingLogger())
    .compile();
  const app: INestMicroservice = moduleRef.createNestMicroservice({
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port: 0 },
    logger: new CapturingLogger(),
  });
  if (module.filter === 'subpath') app.useGlobalFilters(new CircuitBreakerRpcExceptionFilter());
  await app.listen();
  started.push(app);
  const port = (app.unwrap<Server>().address() as AddressInfo).port;
  const client = ClientProxyFactory.create({
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port },
  });
  started.push(client);
  return { app, client, port, registry: app.get(CircuitBreakerRegistry) };
}

/** What the observable errored with (`error` is undefined when it emitted `value`). */
const errorOf = (observable: Observable<unknown>) =>
  firstValueFrom(observable).then(
    (value): { value?: unknown; error?: unknown } => ({ value }),
    (error: unknown) => ({ error }),
  );

describe('CircuitBreakerExceptionFilter over a TCP microservice', () => {
  it('answers a rejected call with the CIRCUIT_OPEN payload and retryAfterMs', async () => {
    const { client, registry } = await microservice();
    expect(await firstValueFrom(client.send('balance', 'acme'))).toEqual({
      account: 'acme',
      balance: 10,
    });
    registry.get('ledger').acquire().fail(new Error('ledger down'));
    const { error } = await errorOf(client.send('balance', 'acme'));
    // Exactly these fields: nothing internal without details.
    expect(error).toEqual({
      status: 'error',
      code: 'CIRCUIT_OPEN',
      message: 'A dependency is unavailable; retry later.',
      retryAfterMs: expect.any(Number),
    });
    const retryAfterMs = (error as { retryAfterMs: number }).retryAfterMs;
    expect(retryAfterMs).toBeGreaterThan(25_000);
    expect(retryAfterMs).toBeLessThanOrEqual(30_000);
    // The guard counted nothing.
    expect(registry.get('ledger').snapshot().totals.rejected.total).toBe(0);
  });

  it("answers a handler past the breaker's deadline with CALL_TIMEOUT", async () => {
    const { client } = await microservice();
    const { error } = await errorOf(client.send('post', {}));
    expect(error).toEqual({
      status: 'error',
      code: 'CALL_TIMEOUT',
      message: 'A dependency did not answer in time; retry later.',
    });
  });

  it('answers alike through the subpath filter, for a microservice without httpFilter', async () => {
    const { client, registry } = await microservice({ filter: 'subpath' });
    registry.get('ledger').isolate();
    const { error } = await errorOf(client.send('balance', 'acme'));
    expect(error).toEqual({
      status: 'error',
      code: 'CIRCUIT_OPEN',
      message: 'A dependency is unavailable; retry later.',
    });
  });
});

describe('circuitBreaker() on ClientProxy.send() / emit() with classifyRpcError', () => {
  const clientBreaker = (options: BreakerOptions = {}) =>
    new Breaker('ledger-client', {
      consecutiveFailures: 1,
      openDurationMs: 30_000,
      timeoutMs: false,
      classify: classifyRpcError,
      ...options,
    });

  it("counts an RpcException carrying a client error as the dependency's answer", async () => {
    const { client } = await microservice();
    const breaker = clientBreaker();
    const { error } = await errorOf(client.send('invalid', 42).pipe(circuitBreaker(breaker)));
    expect(error).toEqual({ statusCode: 400, message: 'account must be a string' });
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', totals: { successes: 1 } });
  });

  it("counts the server's unexpected error as a failure", async () => {
    const { client } = await microservice();
    const breaker = clientBreaker();
    const { error } = await errorOf(client.send('crash', {}).pipe(circuitBreaker(breaker)));
    expect(error).toEqual({ status: 'error', message: 'Internal server error' });
    expect(breaker.state).toBe('open');
  });

  it('counts a timeout as a failure', async () => {
    const { client } = await microservice();
    const breaker = clientBreaker();
    const { error } = await errorOf(
      client.send('hang', {}).pipe(timeout(50), circuitBreaker(breaker)),
    );
    expect((error as Error).name).toBe('TimeoutError');
    expect(breaker.snapshot()).toMatchObject({
      state: 'open',
      totals: { failures: { total: 1 } },
    });
  });

  it('counts a closed connection as a failure', async () => {
    const { client } = await microservice();
    const breaker = clientBreaker();
    const pending = errorOf(client.send('hang', {}).pipe(circuitBreaker(breaker)));
    // Once the request is on the wire, the connection goes away under it.
    await firstValueFrom(client.send('balance', 'warm-up').pipe(circuitBreaker(new Breaker('x'))));
    await client.close();
    const { error } = await pending;
    expect((error as Error).message).toBe('Connection closed');
    expect(breaker.state).toBe('open');
  });

  it('counts a refused connection (send and emit) as a failure', async () => {
    const { client, port, app } = await microservice();
    await client.close();
    await app.close();
    const refused = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    }) as ClientProxy;
    started.push(refused);
    const breaker = clientBreaker({ consecutiveFailures: 2 });
    const sent = await errorOf(refused.send('balance', 'acme').pipe(circuitBreaker(breaker)));
    const emitted = await errorOf(refused.emit('audit', {}).pipe(circuitBreaker(breaker)));
    expect([sent.error, emitted.error].map((e) => (e as { code?: string }).code)).toEqual([
      'ECONNREFUSED',
      'ECONNREFUSED',
    ]);
    expect(breaker.snapshot()).toMatchObject({
      state: 'open',
      totals: { failures: { total: 2, connection: 2 } },
    });
  });

  it("takes a remote breaker's CIRCUIT_OPEN as overload: the client pauses instead of opening", async () => {
    const { client, registry } = await microservice();
    registry.get('ledger').acquire().fail(new Error('ledger down'));
    const breaker = clientBreaker();
    await errorOf(client.send('balance', 'acme').pipe(circuitBreaker(breaker)));
    expect(breaker.snapshot().state).toBe('closed');
    const { error } = await errorOf(client.send('balance', 'acme').pipe(circuitBreaker(breaker)));
    expect(error).toMatchObject({ name: 'CallRejectedError', reason: 'retry-after' });
  });
});
