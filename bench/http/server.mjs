// The Nest application of the HTTP benchmark (bench/http.mjs), one process per
// HTTP adapter, so that the load generator's CPU is not counted in the
// server's. Plain JavaScript over the built dist/: decorators are applied by
// hand, as TypeScript's legacy decorators (with emitDecoratorMetadata) would.
//
// Configuration comes as JSON in argv[2]: { adapter: 'express' | 'fastify', redisPort?: number }.
// Over IPC it says { type: 'ready', port, routes } once listening on a port of
// loopback chosen by the OS, and answers { cmd: 'cpu' } with its
// process.cpuUsage() and the requests its routes counted, { cmd: 'check' } with
// the state of every breaker, and { cmd: 'close' } by closing the application.

import 'reflect-metadata';
import {
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Injectable,
  Module,
  Param,
  ServiceUnavailableException,
  UseInterceptors,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import CircuitBreaker from 'opossum';
import { circuitBreaker as cockatielBreaker, ConsecutiveBreaker, handleAll } from 'cockatiel';
import { defer } from 'rxjs';
import {
  CircuitBreaker as UseCircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  RequireCircuitBreaker,
  UseCircuitBreaker as UseCircuitBreakerInterceptor,
  circuitBreaker,
} from '../../dist/index.js';

const config = JSON.parse(process.argv[2] ?? '{}');
const send = (message) => process.send?.(message);

/** What TypeScript's `__decorate` does for one member: applies the decorators last to first. */
function decorate(target, key, decorators, returnType) {
  if (returnType !== undefined)
    Reflect.defineMetadata('design:returntype', returnType, target, key);
  let descriptor = Object.getOwnPropertyDescriptor(target, key);
  for (const d of decorators.toReversed()) descriptor = d(target, key, descriptor) ?? descriptor;
  Object.defineProperty(target, key, descriptor);
}

/** Constructor injection by token, as `@Inject(token)` on each parameter. */
function injectInto(cls, tokens) {
  tokens.forEach((token, index) => Inject(token)(cls, undefined, index));
}

// One hour: no open breaker half-opens during a run, so every request of an open row is a rejection.
const HOUR_MS = 3_600_000;
const REDIS = config.redisPort !== undefined;

// ---------------------------------------------------------------------------
// The in-process fake upstream: an async call that answers at once.

class Upstream {
  async fetch(id) {
    return { id, ok: true };
  }
}
Injectable()(Upstream);

// ---------------------------------------------------------------------------
// The clients a controller calls: plain, through our decorator, and through the peers wrapped by hand.

class PlainClient {
  constructor(upstream) {
    this.upstream = upstream;
  }

  async fetch(id) {
    return this.upstream.fetch(id);
  }
}
injectInto(PlainClient, [Upstream]);
Injectable()(PlainClient);

class ProtectedClient {
  constructor(upstream) {
    this.upstream = upstream;
  }

  async closed(id) {
    return this.upstream.fetch(id);
  }

  async open(id) {
    return this.upstream.fetch(id);
  }

  async perKey(id) {
    return this.upstream.fetch(id);
  }

  async sharedClosed(id) {
    return this.upstream.fetch(id);
  }

  async sharedOpen(id) {
    return this.upstream.fetch(id);
  }
}
injectInto(ProtectedClient, [Upstream]);
Injectable()(ProtectedClient);
decorate(ProtectedClient.prototype, 'closed', [UseCircuitBreaker('http.closed')], Promise);
decorate(ProtectedClient.prototype, 'open', [UseCircuitBreaker('http.open')], Promise);
decorate(
  ProtectedClient.prototype,
  'perKey',
  [UseCircuitBreaker({ name: 'http.per-key', key: (id) => id })],
  Promise,
);
if (REDIS) {
  decorate(ProtectedClient.prototype, 'sharedClosed', [UseCircuitBreaker('http.shared')], Promise);
  decorate(
    ProtectedClient.prototype,
    'sharedOpen',
    [UseCircuitBreaker('http.shared-open')],
    Promise,
  );
}

/** opossum as its README shows it: one breaker around the async function, `fire()` per call. */
class OpossumClient {
  constructor(upstream) {
    this.breaker = new CircuitBreaker((id) => upstream.fetch(id), {
      timeout: 3000,
      errorThresholdPercentage: 50,
      resetTimeout: 30000,
    });
  }

  fetch(id) {
    return this.breaker.fire(id);
  }
}
injectInto(OpossumClient, [Upstream]);
Injectable()(OpossumClient);

/** cockatiel as its README shows it: `circuitBreaker(handleAll, { halfOpenAfter, breaker })`, `execute()` per call. */
class CockatielClient {
  constructor(upstream) {
    this.upstream = upstream;
    this.breaker = cockatielBreaker(handleAll, {
      halfOpenAfter: 10 * 1000,
      breaker: new ConsecutiveBreaker(5),
    });
  }

  fetch(id) {
    return this.breaker.execute(() => this.upstream.fetch(id));
  }
}
injectInto(CockatielClient, [Upstream]);
Injectable()(CockatielClient);

/** An interceptor that does nothing: what Nest's interceptor machinery costs a route by itself. */
class PassThroughInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Injectable()(PassThroughInterceptor);

// ---------------------------------------------------------------------------
// One route per row of the benchmark: GET /<row>/:id.

const SERVICE_UNAVAILABLE_BODY = {
  statusCode: 503,
  error: 'Service Unavailable',
  message: 'A dependency is unavailable; retry later.',
};

class BenchController {
  constructor(plain, protectedClient, opossum, cockatiel, registry) {
    this.plain = plain;
    this.protectedClient = protectedClient;
    this.opossum = opossum;
    this.cockatiel = cockatiel;
    this.operatorBreaker = registry.get('http.operator');
  }

  bare(id) {
    return this.plain.fetch(id);
  }

  decorated(id) {
    return this.protectedClient.closed(id);
  }

  bareObservable(id) {
    return defer(() => this.plain.fetch(id));
  }

  operator(id) {
    return defer(() => this.plain.fetch(id)).pipe(circuitBreaker(this.operatorBreaker));
  }

  /** The floor of a 503: the handler answers it itself, with the filter's headers and body (its `id` unused, as the open route's is). */
  bare503(_id) {
    return SERVICE_UNAVAILABLE_BODY;
  }

  /** A 503 thrown as Nest's own HttpException (no Retry-After): the exception path of a route without a breaker. */
  thrown503(_id) {
    throw new ServiceUnavailableException(SERVICE_UNAVAILABLE_BODY.message);
  }

  open(id) {
    return this.protectedClient.open(id);
  }

  /** The bare route's handler behind `@RequireCircuitBreaker('http.guard')` (closed): the guard's peek per request. */
  guard(id) {
    return this.plain.fetch(id);
  }

  /** The same behind `@RequireCircuitBreaker('http.guard-open')` (open): the guard answers 503 + Retry-After, the handler never runs. */
  guardOpen(id) {
    return this.plain.fetch(id);
  }

  /** The bare route's handler through `@UseCircuitBreaker('http.interceptor')` (closed): the handling is one call. */
  interceptor(id) {
    return this.plain.fetch(id);
  }

  /** The bare route's handler through PassThroughInterceptor: the interceptor row's own baseline. */
  bareIntercepted(id) {
    return this.plain.fetch(id);
  }

  perKey(id) {
    return this.protectedClient.perKey(id);
  }

  sharedClosed(id) {
    return this.protectedClient.sharedClosed(id);
  }

  sharedOpen(id) {
    return this.protectedClient.sharedOpen(id);
  }

  opossumRoute(id) {
    return this.opossum.fetch(id);
  }

  cockatielRoute(id) {
    return this.cockatiel.fetch(id);
  }
}
injectInto(BenchController, [
  PlainClient,
  ProtectedClient,
  OpossumClient,
  CockatielClient,
  CircuitBreakerRegistry,
]);
Controller()(BenchController);

const id = (proto, key) => Param('id')(proto, key, 0);
const proto = BenchController.prototype;
/** route path → handler, in the order of the benchmark's rows (bench/http/rows.mjs names them). */
const ROUTES = {
  bare: 'bare',
  decorated: 'decorated',
  guard: 'guard',
  'bare-intercepted': 'bareIntercepted',
  interceptor: 'interceptor',
  'bare-observable': 'bareObservable',
  operator: 'operator',
  'bare-503': 'bare503',
  'thrown-503': 'thrown503',
  open: 'open',
  'guard-open': 'guardOpen',
  'per-key': 'perKey',
  opossum: 'opossumRoute',
  cockatiel: 'cockatielRoute',
  ...(REDIS ? { shared: 'sharedClosed', 'shared-open': 'sharedOpen' } : {}),
};
for (const [path, handler] of Object.entries(ROUTES)) {
  const decorators = [Get(`${path}/:id`)];
  if (handler === 'bare503')
    decorators.push(HttpCode(503), Header('Retry-After', String(HOUR_MS / 1000)));
  // As TypeScript applies `@Get()` above `@RequireCircuitBreaker()` / `@UseCircuitBreaker()`: the route's enhancer runs first.
  if (handler === 'guard') decorators.push(RequireCircuitBreaker('http.guard'));
  if (handler === 'guardOpen') decorators.push(RequireCircuitBreaker('http.guard-open'));
  if (handler === 'bareIntercepted') decorators.push(UseInterceptors(PassThroughInterceptor));
  if (handler === 'interceptor') decorators.push(UseCircuitBreakerInterceptor('http.interceptor'));
  decorate(proto, handler, decorators);
  // Every handler takes the id, the 503 routes too: the open route pays for extracting it, so its baseline must.
  id(proto, handler);
}

// ---------------------------------------------------------------------------
// The module: every breaker local unless it says `share`, the filter on.

async function storeOf() {
  if (!REDIS) return undefined;
  const { Redis } = await import('ioredis');
  const { RedisBreakerStore } = await import('../../dist/redis/index.js');
  return new RedisBreakerStore({
    redis: new Redis(config.redisPort, '127.0.0.1'),
    closeClient: true,
    keyPrefix: `bench-http-${config.adapter}:`,
    instanceId: `bench-${config.adapter}`,
    logger: false,
  });
}

const store = await storeOf();
const tripped = { consecutiveFailures: 1, openDurationMs: HOUR_MS };
// A Nest module is a class that only carries metadata; in plain JavaScript the decorator is applied by hand.
// oxlint-disable-next-line typescript/no-extraneous-class
class AppModule {}
Module({
  imports: [
    CircuitBreakerModule.forRoot({
      store,
      logging: false,
      httpFilter: true,
      defaults: { share: false },
      breakers: {
        'http.closed': {},
        'http.operator': {},
        'http.open': tripped,
        'http.guard': {},
        'http.guard-open': tripped,
        'http.interceptor': {},
        // Room for every key of the run: no child is evicted, each key keeps its own breaker.
        'http.per-key': { perKey: { maxKeys: 10_000 } },
        ...(REDIS
          ? {
              'http.shared': { share: true },
              // quorum 1: this replica's own opening opens the fleet.
              'http.shared-open': { ...tripped, share: { quorum: 1 } },
            }
          : {}),
      },
    }),
  ],
  controllers: [BenchController],
  providers: [Upstream, PlainClient, ProtectedClient, OpossumClient, CockatielClient],
})(AppModule);

async function createApp() {
  if (config.adapter === 'fastify') {
    const { FastifyAdapter } = await import('@nestjs/platform-fastify');
    return NestFactory.create(AppModule, new FastifyAdapter(), { logger: ['error'] });
  }
  return NestFactory.create(AppModule, { logger: ['error'] });
}

const app = await createApp();
await app.init();
const registry = app.get(CircuitBreakerRegistry);
const down = () => Promise.reject(new Error('bench: the upstream is down'));
for (const name of ['http.open', 'http.guard-open', ...(REDIS ? ['http.shared-open'] : [])]) {
  await registry
    .get(name)
    .execute(down)
    .catch(() => undefined);
}
await app.listen(0, '127.0.0.1');
const address = app.getHttpServer().address();

/** Every breaker's state, for the runner's sanity checks after the run. */
function states() {
  const out = {};
  for (const name of registry.list()) {
    const b = registry.get(name);
    out[name] = { state: b.state, ...(b.snapshot().family ? { family: b.snapshot().family } : {}) };
    if (name === 'http.shared' || name === 'http.shared-open')
      out[name].shared = b.snapshot().coordination?.shared === true;
  }
  const controller = app.get(BenchController);
  out.opossum = { state: controller.opossum.breaker.closed ? 'closed' : 'not closed' };
  out.cockatiel = { state: controller.cockatiel.breaker.state === 0 ? 'closed' : 'not closed' };
  return out;
}

process.on('message', async (message) => {
  if (message.cmd === 'cpu') send({ type: 'cpu', id: message.id, cpu: process.cpuUsage() });
  else if (message.cmd === 'check') send({ type: 'check', id: message.id, states: states() });
  else if (message.cmd === 'close') {
    await app.close();
    send({ type: 'closed', id: message.id });
    process.disconnect();
  }
});
// The runner went away (killed, or its timeout in CI): so does this server.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready', port: address.port, routes: Object.keys(ROUTES) });
