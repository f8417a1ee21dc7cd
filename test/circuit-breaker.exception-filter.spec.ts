import { Controller, Get, NotFoundException, type INestApplication } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { CallTimeoutError, CircuitBreakerExceptionFilter, CircuitBreakerModule, CircuitOpenError } from '../lib/index.js';

@Controller()
class ErrorsController {
  @Get('open')
  open() {
    throw new CircuitOpenError('payments', 'open', 'open', 1_200);
  }
  @Get('isolated')
  isolated() {
    throw new CircuitOpenError('payments', 'isolated', 'isolated', undefined);
  }
  @Get('timeout')
  timeout() {
    throw new CallTimeoutError('payments', 2_000);
  }
  @Get('other')
  other() {
    throw new NotFoundException('no such order');
  }
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(register: 'forRoot' | 'useGlobalFilters' | 'none') {
  const moduleRef = await Test.createTestingModule({
    imports: [CircuitBreakerModule.forRoot(register === 'forRoot' ? { httpFilter: true } : {})],
    controllers: [ErrorsController],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  if (register === 'useGlobalFilters') app.useGlobalFilters(new CircuitBreakerExceptionFilter(app.get(HttpAdapterHost)));
  await app.init();
  return app.getHttpServer();
}

describe('CircuitBreakerExceptionFilter', () => {
  it('maps CircuitOpenError to 503 with Retry-After in whole seconds, rounded up', async () => {
    const server = await start('forRoot');
    const response = await request(server).get('/open').expect(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(response.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'Circuit breaker "payments" rejected the call: the circuit is open.',
      breaker: 'payments',
      reason: 'open',
      retryAfterMs: 1_200,
    });
  });

  it('sends no Retry-After for an isolated breaker: only a person ends isolation', async () => {
    const server = await start('forRoot');
    const response = await request(server).get('/isolated').expect(503);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(response.body).toMatchObject({ reason: 'isolated', breaker: 'payments' });
    expect(response.body.retryAfterMs).toBeUndefined();
  });

  it('maps CallTimeoutError to 504', async () => {
    const server = await start('forRoot');
    const response = await request(server).get('/timeout').expect(504);
    expect(response.body).toEqual({
      statusCode: 504,
      error: 'Gateway Timeout',
      message: 'Circuit breaker "payments": the call did not settle within 2000 ms and was aborted.',
      breaker: 'payments',
      timeoutMs: 2_000,
    });
  });

  it('leaves other errors to Nest', async () => {
    const server = await start('forRoot');
    const response = await request(server).get('/other').expect(404);
    expect(response.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'no such order' });
  });

  it('is not registered unless asked for: the errors are then plain 500s', async () => {
    const server = await start('none');
    await request(server).get('/open').expect(500);
  });

  it('can be registered with app.useGlobalFilters()', async () => {
    const server = await start('useGlobalFilters');
    await request(server).get('/timeout').expect(504);
  });
});
