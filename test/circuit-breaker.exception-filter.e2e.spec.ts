import {
  Catch,
  Controller,
  Get,
  HttpException,
  Injectable,
  Module,
  NotFoundException,
  type ArgumentsHost,
  type ExceptionFilter,
  type Provider,
} from '@nestjs/common';
import { APP_FILTER, HttpAdapterHost } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import {
  toHttpResponse,
  CallTimeoutError,
  CircuitBreakerExceptionFilter,
  CircuitBreakerModule,
  CallRejectedError,
  type CircuitBreakerHttpOptions,
} from '../lib/index.js';
import { nestApps } from './helpers/nest-app.js';

@Controller()
class ErrorsController {
  @Get('open')
  open() {
    throw new CallRejectedError('payments', 'open', 'open', 1_200);
  }
  @Get('isolated')
  isolated() {
    throw new CallRejectedError('payments', 'isolated', 'isolated', undefined);
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

/** The public 503 and 504 bodies: what a client may act on, no internal names. */
const UNAVAILABLE = {
  statusCode: 503,
  error: 'Service Unavailable',
  message: 'A dependency is unavailable; retry later.',
};
const TIMED_OUT = {
  statusCode: 504,
  error: 'Gateway Timeout',
  message: 'A dependency did not answer in time; retry later.',
};

/** A catch-all as the Nest documentation writes one: every error becomes the application's envelope. */
@Catch()
class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly breakers?: CircuitBreakerExceptionFilter) {}
  catch(exception: unknown, host: ArgumentsHost) {
    if (this.breakers?.catch(exception, host)) return;
    const response = host
      .switchToHttp()
      .getResponse<{ status(code: number): { json(body: unknown): void } }>();
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    response.status(status).json({ ok: false, status });
  }
}

/** The same, registered as an APP_FILTER provider, with the breaker filter injected. */
@Injectable()
@Catch()
class InjectedAllExceptionsFilter extends AllExceptionsFilter {
  // Not useless: it gives Nest the parameter type to inject (design:paramtypes).
  // oxlint-disable-next-line no-useless-constructor
  constructor(breakers: CircuitBreakerExceptionFilter) {
    super(breakers);
  }
}

const startApp = nestApps();

interface Setup {
  httpFilter?: boolean | CircuitBreakerHttpOptions;
  /** The breaker filter registered by hand: the module's instance, or one built with new. */
  register?: 'app.get' | 'new';
  /** A catch-all registered with app.useGlobalFilters(): plain, or delegating to the breaker filter. */
  catchAll?: 'plain' | 'delegating';
  /** Providers of a module imported after CircuitBreakerModule. */
  laterModule?: Provider[];
  /** Providers of the root module itself. */
  rootProviders?: Provider[];
}

async function start(setup: Setup) {
  @Module({ providers: setup.laterModule ?? [] })
  class LaterModule {}
  const app = await startApp(
    [
      CircuitBreakerModule.forRoot(
        setup.httpFilter === undefined ? {} : { httpFilter: setup.httpFilter },
      ),
      LaterModule,
    ],
    {
      controllers: [ErrorsController],
      providers: setup.rootProviders ?? [],
      beforeInit: (created) => {
        if (setup.register === 'app.get')
          created.useGlobalFilters(created.get(CircuitBreakerExceptionFilter));
        if (setup.register === 'new')
          created.useGlobalFilters(
            new CircuitBreakerExceptionFilter(created.get(HttpAdapterHost), { details: true }),
          );
        if (setup.catchAll === 'plain') created.useGlobalFilters(new AllExceptionsFilter());
        if (setup.catchAll === 'delegating')
          created.useGlobalFilters(
            new AllExceptionsFilter(created.get(CircuitBreakerExceptionFilter)),
          );
      },
    },
  );
  return app.getHttpServer();
}

describe('CircuitBreakerExceptionFilter', () => {
  it('maps CallRejectedError to 503 with Retry-After in whole seconds, rounded up, and a body that names no breaker', async () => {
    const server = await start({ httpFilter: true });
    const response = await request(server).get('/open').expect(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(response.body).toEqual(UNAVAILABLE);
  });

  it('sends no Retry-After for an isolated breaker: only a person ends isolation', async () => {
    const server = await start({ httpFilter: true });
    const response = await request(server).get('/isolated').expect(503);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(response.body).toEqual(UNAVAILABLE);
  });

  it('maps CallTimeoutError to 504 with a body that names no breaker', async () => {
    const server = await start({ httpFilter: true });
    const response = await request(server).get('/timeout').expect(504);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(response.body).toEqual(TIMED_OUT);
  });

  it('leaves other errors to Nest', async () => {
    const server = await start({ httpFilter: true });
    const response = await request(server).get('/other').expect(404);
    expect(response.body).toEqual({
      statusCode: 404,
      error: 'Not Found',
      message: 'no such order',
    });
  });

  it('is not registered unless asked for: the errors are then plain 500s', async () => {
    const server = await start({});
    await request(server).get('/open').expect(500);
    await request(server).get('/open').expect(500);
  });

  it('can be registered with app.useGlobalFilters(), as the module provides it or built with new', async () => {
    const server = await start({ register: 'app.get' });
    expect((await request(server).get('/timeout').expect(504)).body).toEqual(TIMED_OUT);
    const built = await start({ register: 'new' });
    expect((await request(built).get('/timeout').expect(504)).body).toMatchObject({
      breaker: 'payments',
      timeoutMs: 2_000,
    });
  });
});

describe('httpFilter options: details and body', () => {
  it('details: true names the breaker, the reason and the wait, for internal APIs', async () => {
    const server = await start({ httpFilter: { details: true } });
    const open = await request(server).get('/open').expect(503);
    expect(open.headers['retry-after']).toBe('2');
    expect(open.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'Circuit breaker "payments" rejected the call: the circuit is open.',
      breaker: 'payments',
      reason: 'open',
      retryAfterMs: 1_200,
    });
    const isolated = await request(server).get('/isolated').expect(503);
    expect(isolated.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'Circuit breaker "payments" rejected the call: the circuit was isolated by hand.',
      breaker: 'payments',
      reason: 'isolated',
    });
    const timeout = await request(server).get('/timeout').expect(504);
    expect(timeout.body).toEqual({
      statusCode: 504,
      error: 'Gateway Timeout',
      message:
        'Circuit breaker "payments": the call did not settle within 2000 ms and was aborted.',
      breaker: 'payments',
      timeoutMs: 2_000,
    });
  });

  it('body builds the whole body in the application envelope; status and Retry-After stay the filter’s', async () => {
    const body = vi.fn((error: CallRejectedError | CallTimeoutError, status: 503 | 504) => ({
      success: false,
      error: { code: error.code, status },
    }));
    const server = await start({ httpFilter: { body } });
    const open = await request(server).get('/open').expect(503);
    expect(open.headers['retry-after']).toBe('2');
    expect(open.body).toEqual({ success: false, error: { code: 'CIRCUIT_OPEN', status: 503 } });
    const timeout = await request(server).get('/timeout').expect(504);
    expect(timeout.body).toEqual({ success: false, error: { code: 'CALL_TIMEOUT', status: 504 } });
    expect(body.mock.calls.map(([error, status]) => [error.constructor.name, status])).toEqual([
      ['CallRejectedError', 503],
      ['CallTimeoutError', 504],
    ]);
  });

  it('a body factory that returns undefined gets the default body; one that throws still answers 503 with the default body', async () => {
    let mode: 'undefined' | 'throw' = 'undefined';
    const server = await start({
      httpFilter: {
        body: () => {
          if (mode === 'throw') throw new Error('envelope bug');
          return undefined;
        },
      },
    });
    expect((await request(server).get('/open').expect(503)).body).toEqual(UNAVAILABLE);
    mode = 'throw';
    const response = await request(server).get('/open').expect(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(response.body).toEqual(UNAVAILABLE);
  });

  it('works through forRootAsync', async () => {
    const app = await startApp(
      [
        CircuitBreakerModule.forRootAsync({
          useFactory: () => ({}),
          httpFilter: { details: true },
        }),
      ],
      { controllers: [ErrorsController] },
    );
    const response = await request(app.getHttpServer()).get('/open').expect(503);
    expect(response.body).toMatchObject({ breaker: 'payments', reason: 'open' });
  });

  it('an httpFilter of the wrong type fails where forRoot() is called, naming the option and the fix', () => {
    expect(() => CircuitBreakerModule.forRoot({ httpFilter: 'yes' as never })).toThrow(
      'CircuitBreakerModule: option "httpFilter" got "yes". Pass true, false, or { details?: boolean, body?: (error, status) => body }.',
    );
  });

  it.each([
    [
      { details: 'yes' },
      'CircuitBreakerModule: option "httpFilter.details" got "yes". Pass true to show breaker names in 503/504 bodies, false (the default) to hide them.',
    ],
    [
      { body: { success: false } },
      'CircuitBreakerModule: option "httpFilter.body" got an object. Pass a function (error, status) => body, or leave it out for the default body.',
    ],
    [
      { detail: true },
      'CircuitBreakerModule: option "httpFilter.detail" got true. It is not an option of httpFilter: use details or body, or remove it.',
    ],
    [
      { details: true, body: () => ({}) },
      'CircuitBreakerModule: option "httpFilter.details" got true. It has no effect beside httpFilter.body, which builds the whole body: remove details, and read error.breakerName in body if you want it.',
    ],
  ])(
    'an invalid httpFilter (%o) fails start-up, naming the option and the fix',
    async (httpFilter, message) => {
      const compile = Test.createTestingModule({
        imports: [CircuitBreakerModule.forRoot({ httpFilter: httpFilter as never })],
      }).compile();
      await expect(compile).rejects.toThrow(message);
    },
  );
});

describe('a catch-all exception filter and the breaker filter', () => {
  // Nest tries method filters, then class filters, then global filters from the last registered to the
  // first, and the first whose @Catch() matches wins: a more specific @Catch() does not.

  it('a catch-all registered with app.useGlobalFilters() wins over httpFilter: true: a rejection becomes its 500, without Retry-After', async () => {
    const server = await start({ httpFilter: true, catchAll: 'plain' });
    const response = await request(server).get('/open').expect(500);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(response.body).toEqual({ ok: false, status: 500 });
  });

  it('a catch-all that delegates to the module’s filter keeps 503 + Retry-After, 504, and the module’s httpFilter options', async () => {
    const server = await start({ httpFilter: { details: true }, catchAll: 'delegating' });
    const open = await request(server).get('/open').expect(503);
    expect(open.headers['retry-after']).toBe('2');
    expect(open.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'Circuit breaker "payments" rejected the call: the circuit is open.',
      breaker: 'payments',
      reason: 'open',
      retryAfterMs: 1_200,
    });
    await request(server).get('/timeout').expect(504);
    // Everything else is still the catch-all's.
    expect((await request(server).get('/other').expect(404)).body).toEqual({
      ok: false,
      status: 404,
    });
  });

  it('delegation works without httpFilter too: the module always provides the filter', async () => {
    const server = await start({ catchAll: 'delegating' });
    const open = await request(server).get('/open').expect(503);
    expect(open.headers['retry-after']).toBe('2');
    expect(open.body).toEqual(UNAVAILABLE);
    expect((await request(server).get('/timeout').expect(504)).body).toEqual(TIMED_OUT);
  });

  it('a catch-all APP_FILTER in the root module is registered before httpFilter’s, so the breaker filter answers first', async () => {
    const server = await start({
      httpFilter: true,
      rootProviders: [{ provide: APP_FILTER, useValue: new AllExceptionsFilter() }],
    });
    const open = await request(server).get('/open').expect(503);
    expect(open.headers['retry-after']).toBe('2');
    expect(open.body).toEqual(UNAVAILABLE);
    expect((await request(server).get('/other').expect(404)).body).toEqual({
      ok: false,
      status: 404,
    });
  });

  it('a catch-all APP_FILTER in a module imported after CircuitBreakerModule wins over httpFilter: true', async () => {
    const server = await start({
      httpFilter: true,
      laterModule: [{ provide: APP_FILTER, useValue: new AllExceptionsFilter() }],
    });
    const response = await request(server).get('/open').expect(500);
    expect(response.headers['retry-after']).toBeUndefined();
    expect(response.body).toEqual({ ok: false, status: 500 });
  });

  it('an APP_FILTER catch-all that injects CircuitBreakerExceptionFilter and delegates answers 503 + Retry-After wherever it is registered', async () => {
    const server = await start({
      laterModule: [{ provide: APP_FILTER, useClass: InjectedAllExceptionsFilter }],
    });
    const open = await request(server).get('/open').expect(503);
    expect(open.headers['retry-after']).toBe('2');
    expect(open.body).toEqual(UNAVAILABLE);
    expect((await request(server).get('/other').expect(404)).body).toEqual({
      ok: false,
      status: 404,
    });
  });
});

describe('toHttpResponse()', () => {
  it('gives the status, headers and body the filter would send, and undefined for other errors', () => {
    const open = new CallRejectedError('payments', 'open', 'open', 1_001);
    expect(toHttpResponse(open)).toEqual({
      status: 503,
      headers: { 'Retry-After': '2' },
      body: UNAVAILABLE,
    });
    expect(toHttpResponse(new CallTimeoutError('payments', 2_000))).toEqual({
      status: 504,
      headers: {},
      body: TIMED_OUT,
    });
    expect(toHttpResponse(open, { details: true })?.body).toMatchObject({
      breaker: 'payments',
      reason: 'open',
      retryAfterMs: 1_001,
    });
    expect(toHttpResponse(open, { body: (_error, status) => ({ status }) })?.body).toEqual({
      status: 503,
    });
    expect(toHttpResponse(new Error('other'))).toBeUndefined();
    expect(toHttpResponse(undefined)).toBeUndefined();
  });
});
