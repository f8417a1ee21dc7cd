import {
  Controller,
  Get,
  HttpException,
  Injectable,
  Query,
  type PipeTransform,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  ConcurrencyLimit,
  ConcurrencyLimitInterceptor,
  Criticality,
  type CircuitBreakerModuleOptions,
} from '../lib/index.js';
import { deferred } from './helpers/deferred.js';
import { HTTP_PLATFORMS, platformApps } from './helpers/http-platforms.js';
import { CapturingLogger } from './helpers/nest-app.js';

/** What ran behind the interceptor, in order: the pipe and the handler, with the request's id. */
const ran: string[] = [];
/** Each handler waits for its own promise, settled by the test; `started` says when it began. */
const held = new Map<string, ReturnType<typeof deferred<unknown>>>();
const started = new Map<string, ReturnType<typeof deferred<void>>>();
const gate = (id: string) => {
  if (!held.has(id)) held.set(id, deferred());
  if (!started.has(id)) started.set(id, deferred<void>());
  return { held: held.get(id)!, started: started.get(id)! };
};
/** Makes the handler of `id` fail with `error` (rejected before the handler awaits it: marked handled). */
const failWith = (id: string, error: unknown) => {
  const { held: promise } = gate(id);
  promise.promise.catch(() => undefined);
  promise.reject(error);
};
afterEach(() => {
  ran.length = 0;
  held.clear();
  started.clear();
});

@Injectable()
class CountingPipe implements PipeTransform {
  transform(value: unknown) {
    ran.push(`pipe ${String(value)}`);
    return value;
  }
}

async function hold(id: string): Promise<unknown> {
  ran.push(`handler ${id}`);
  const { held: promise, started: begun } = gate(id);
  begun.resolve();
  return { id, answer: await promise.promise };
}

@Controller()
@ConcurrencyLimit('api')
class WorkController {
  @Get('work')
  work(@Query('id', CountingPipe) id: string) {
    return hold(id);
  }

  @Get('batch')
  @Criticality('sheddable')
  batch(@Query('id', CountingPipe) id: string) {
    return hold(id);
  }
}

@Controller()
class PlainController {
  @Get('plain')
  plain(@Query('id', CountingPipe) id: string) {
    return hold(id);
  }
}

const FIXED_ONE = { algorithm: 'fixed' as const, initialLimit: 1, maxQueue: 0 };

describe.each(HTTP_PLATFORMS)('ConcurrencyLimitInterceptor on %s', (platform) => {
  const start = platformApps(platform);
  const app = (options: CircuitBreakerModuleOptions, providers: unknown[] = []) =>
    start([CircuitBreakerModule.forRoot(options)], {
      controllers: [WorkController, PlainController],
      providers,
    });
  const get = (url: string, path: string, init: RequestInit = {}) => fetch(`${url}${path}`, init);

  it('sheds a request beyond the limit with 503 and LOAD_SHED, no Retry-After, before pipes and the handler run', async () => {
    const { url, app: nest } = await app({ limiters: { api: FIXED_ONE } });
    const first = get(url, '/work?id=a');
    await gate('a').started.promise;
    const shed = await get(url, '/work?id=b');
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBeNull();
    expect(shed.headers.get('circuit-breaker-code')).toBe('LOAD_SHED');
    expect(await shed.json()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'LOAD_SHED',
      message: 'The service is overloaded; retry later.',
    });
    // Neither the pipe nor the handler of the shed request ran.
    expect(ran).toEqual(['pipe a', 'handler a']);
    gate('a').held.resolve(1);
    expect(await (await first).json()).toEqual({ id: 'a', answer: 1 });
    // Freed on success: the next request runs.
    gate('c').held.resolve(3);
    expect(await (await get(url, '/work?id=c')).json()).toEqual({ id: 'c', answer: 3 });
    expect(nest.get(CircuitBreakerRegistry).limiter('api').snapshot()).toMatchObject({
      inFlight: 0,
      admitted: 2,
      shed: 1,
    });
  });

  it('frees the place when the handler fails, whatever the error', async () => {
    const { url, app: nest } = await app({ limiters: { api: FIXED_ONE } });
    const limiter = nest.get(CircuitBreakerRegistry).limiter('api');
    failWith('a', new HttpException('busy downstream', 503));
    expect((await get(url, '/work?id=a')).status).toBe(503);
    expect(limiter.snapshot().inFlight).toBe(0);
    failWith('b', new HttpException('no such thing', 404));
    expect((await get(url, '/work?id=b')).status).toBe(404);
    failWith('c', new Error('null pointer'));
    expect((await get(url, '/work?id=c')).status).toBe(500);
    expect(limiter.snapshot()).toMatchObject({ inFlight: 0, admitted: 3, shed: 0 });
  });

  it('runs a queued request when the running one ends', async () => {
    const { url, app: nest } = await app({
      limiters: { api: { ...FIXED_ONE, maxQueue: 2, queueTimeoutMs: 60_000 } },
    });
    const limiter = nest.get(CircuitBreakerRegistry).limiter('api');
    const first = get(url, '/work?id=a');
    await gate('a').started.promise;
    const second = get(url, '/work?id=b');
    await vi.waitFor(() => expect(limiter.snapshot().queued).toBe(1));
    expect(ran).toEqual(['pipe a', 'handler a']);
    gate('a').held.resolve(1);
    await gate('b').started.promise;
    gate('b').held.resolve(2);
    expect(await (await first).json()).toEqual({ id: 'a', answer: 1 });
    expect(await (await second).json()).toEqual({ id: 'b', answer: 2 });
    expect(ran).toEqual(['pipe a', 'handler a', 'pipe b', 'handler b']);
    expect(limiter.snapshot()).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it('gives a freed place to the most important waiter: header, then route metadata, then the default', async () => {
    const { url, app: nest } = await app({
      limiters: { api: { ...FIXED_ONE, maxQueue: 5, queueTimeoutMs: 60_000 } },
      criticalityHeader: 'X-Criticality',
    });
    const limiter = nest.get(CircuitBreakerRegistry).limiter('api');
    const running = get(url, '/work?id=a');
    await gate('a').started.promise;
    const waiting = [
      get(url, '/batch?id=sheddable'),
      get(url, '/work?id=critical'),
      // An unknown value is the route's criticality (here the default), never an error.
      get(url, '/work?id=unknown', { headers: { 'x-criticality': 'urgent' } }),
      get(url, '/batch?id=plus', { headers: { 'x-criticality': ' Critical-Plus ' } }),
    ];
    await vi.waitFor(() => expect(limiter.snapshot().queued).toBe(4));
    for (const id of ['plus', 'critical', 'unknown', 'sheddable']) gate(id).held.resolve(id);
    gate('a').held.resolve('a');
    await Promise.all([running, ...waiting]);
    expect(ran.filter((step) => step.startsWith('handler'))).toEqual([
      'handler a',
      'handler plus',
      'handler critical',
      'handler unknown',
      'handler sheddable',
    ]);
  });

  it('sheds the newest less important waiter when a more important request finds the queue full', async () => {
    const { url, app: nest } = await app({
      limiters: { api: { ...FIXED_ONE, maxQueue: 1, queueTimeoutMs: 60_000 } },
    });
    const limiter = nest.get(CircuitBreakerRegistry).limiter('api');
    const running = get(url, '/work?id=a');
    await gate('a').started.promise;
    const batch = get(url, '/batch?id=batch');
    await vi.waitFor(() => expect(limiter.snapshot().queued).toBe(1));
    const critical = get(url, '/work?id=critical');
    const evicted = await batch;
    expect([evicted.status, evicted.headers.get('circuit-breaker-code')]).toEqual([
      503,
      'LOAD_SHED',
    ]);
    // A critical request finding the queue full of critical ones is shed itself.
    expect((await get(url, '/work?id=late')).status).toBe(503);
    gate('a').held.resolve('a');
    gate('critical').held.resolve('critical');
    expect((await critical).status).toBe(200);
    await running;
    expect(ran.filter((step) => step.startsWith('handler'))).toEqual([
      'handler a',
      'handler critical',
    ]);
    expect(limiter.snapshot().shedBy).toEqual({
      'critical-plus': 0,
      critical: 1,
      'sheddable-plus': 0,
      sheddable: 1,
    });
  });

  it('takes a waiter out of the queue when its client goes away', async () => {
    const { url, app: nest } = await app({
      limiters: { api: { ...FIXED_ONE, maxQueue: 2, queueTimeoutMs: 60_000 } },
    });
    const limiter = nest.get(CircuitBreakerRegistry).limiter('api');
    const first = get(url, '/work?id=a');
    await gate('a').started.promise;
    const logged = vi.spyOn(CapturingLogger.prototype, 'error');
    const client = new AbortController();
    const abandoned = get(url, '/work?id=b', { signal: client.signal }).catch(
      (error: unknown) => (error as Error).name,
    );
    await vi.waitFor(() => expect(limiter.snapshot().queued).toBe(1));
    client.abort();
    expect(await abandoned).toBe('AbortError');
    await vi.waitFor(() => expect(limiter.snapshot().queued).toBe(0));
    gate('a').held.resolve(1);
    await first;
    gate('c').held.resolve(3);
    expect((await get(url, '/work?id=c')).status).toBe(200);
    // The abandoned request never ran, and nothing was logged about it: nobody was there to answer.
    expect(ran).toEqual(['pipe a', 'handler a', 'pipe c', 'handler c']);
    expect(logged).not.toHaveBeenCalled();
    logged.mockRestore();
    expect(limiter.snapshot()).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it('limits every route as a global interceptor, with the limiter named "default"', async () => {
    const { url, app: nest } = await app(
      { limiters: { default: FIXED_ONE, api: { algorithm: 'fixed', initialLimit: 5 } } },
      [{ provide: APP_INTERCEPTOR, useClass: ConcurrencyLimitInterceptor }],
    );
    const first = get(url, '/plain?id=a');
    await gate('a').started.promise;
    expect((await get(url, '/plain?id=b')).status).toBe(503);
    // A route that names its limiter takes one place, in that limiter only.
    gate('c').held.resolve(3);
    expect((await get(url, '/work?id=c')).status).toBe(200);
    const registry = nest.get(CircuitBreakerRegistry);
    expect(registry.limiterSnapshots().map(({ name, admitted }) => [name, admitted])).toEqual([
      ['default', 1],
      ['api', 1],
    ]);
    gate('a').held.resolve(1);
    await first;
  });
});
