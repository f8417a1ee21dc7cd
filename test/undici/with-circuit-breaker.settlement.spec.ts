import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  CallRejectedError,
  type BreakerOptions,
} from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { withCircuitBreaker, type UndiciCircuitBreakerOptions } from '../../lib/undici/index.js';
import { startCountingServer, type CountingServer } from './counting-server.js';

/** The two forms: the interceptor for compose(), and the dispatcher wrapping the Agent. */
const FORMS = ['compose', 'dispatcher'] as const;
let form: (typeof FORMS)[number] = 'compose';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function server(): Promise<CountingServer> {
  const started = await startCountingServer();
  cleanups.push(() => started.close());
  return started;
}

// A bulkhead only to read how many permits are held: a permit never settled would stay "active".
function breakerOf(options: BreakerOptions, clock = new ManualClock()): Breaker {
  return new Breaker('upstream', { bulkhead: { maxConcurrent: 10 }, ...options }, { clock });
}

function inFlight(breaker: Breaker): number {
  return breaker.snapshot().bulkhead!.active;
}

function agentWith(
  options: UndiciCircuitBreakerOptions,
  agentOptions: Agent.Options = {},
): Dispatcher {
  const agent = new Agent(agentOptions);
  cleanups.push(() => agent.destroy());
  return form === 'compose'
    ? agent.compose(withCircuitBreaker(options))
    : withCircuitBreaker(agent, options);
}

/** Dispatches with a handler of the caller's own; resolves with its last word. */
function dispatchWith(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  handler: Dispatcher.DispatchHandler,
): Promise<Error | 'end'> {
  return new Promise((resolve) => {
    dispatcher.dispatch(options, {
      onRequestStart: () => {},
      ...handler,
      onResponseEnd: () => resolve('end'),
      onResponseError: (_controller, error) => resolve(error),
    });
  });
}

describe.each(FORMS)('withCircuitBreaker(): every permit is settled (%s form)', (each) => {
  beforeEach(() => {
    form = each;
  });

  it('a handler that throws at the headers: the call is counted and its permit given back', async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: 500 });
    const dispatcher = agentWith({ breaker });

    const last = await dispatchWith(
      dispatcher,
      { origin: upstream.origin, path: '/ok', method: 'GET' },
      {
        onResponseStart: () => {
          throw new Error('handler bug');
        },
      },
    );

    expect((last as Error).message).toBe('handler bug');
    expect(inFlight(breaker)).toBe(0);
    expect(breaker.snapshot().totals.successes).toBe(1);
    expect(breaker.snapshot().totals.failures.total).toBe(0);
  });

  it('a handler that throws when the request starts: its permit is given back, not counted', async () => {
    const upstream = await server();
    const breaker = breakerOf({ consecutiveFailures: 1, timeoutMs: 500 });
    const dispatcher = agentWith({ breaker });

    const last = await dispatchWith(
      dispatcher,
      { origin: upstream.origin, path: '/ok', method: 'GET' },
      {
        onRequestStart: () => {
          throw new Error('handler bug');
        },
      },
    );

    expect((last as Error).message).toBe('handler bug');
    expect(inFlight(breaker)).toBe(0);
    expect(breaker.snapshot().totals.ignored).toBe(1);
    expect(breaker.state).toBe('closed');
  });

  it('a request still queued in undici at the deadline: its caller hears at once, the server never sees it', async () => {
    const upstream = await server();
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 500 }, clock);
    const dispatcher = agentWith({ breaker }, { connections: 1 });

    const first = request(`${upstream.origin}/hang`, { dispatcher }).catch((e: unknown) => e);
    await upstream.whenRequests(1);
    const queued = request(`${upstream.origin}/ok`, { dispatcher }).catch((e: unknown) => e);
    clock.advance(500);

    expect(await first).toBeInstanceOf(CallTimeoutError);
    expect(await queued).toBeInstanceOf(CallTimeoutError);
    await upstream.whenClosed(1);
    expect(upstream.requests.get('/ok')).toBeUndefined();
    expect(breaker.snapshot().totals.timeouts).toBe(2);
    expect(inFlight(breaker)).toBe(0);
  });

  it("a refused connection is the dependency's failure", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const breaker = breakerOf({ timeoutMs: 500 });
    const dispatcher = agentWith({ breaker });

    const error = await request(`http://127.0.0.1:${port}/ok`, { dispatcher }).catch(
      (e: unknown) => e,
    );

    expect((error as { code: string }).code).toBe('ECONNREFUSED');
    expect(breaker.snapshot().totals.failures.connection).toBe(1);
    expect(inFlight(breaker)).toBe(0);
  });

  it('a request undici rejects as malformed is not counted against the dependency', async () => {
    const upstream = await server();
    const breaker = breakerOf({ consecutiveFailures: 1, timeoutMs: 500 });
    const dispatcher = agentWith({ breaker });

    const error = await request(`${upstream.origin}/ok`, {
      dispatcher,
      headers: { 'bad header': 'x' },
    }).catch((e: unknown) => e);

    expect((error as { code: string }).code).toBe('UND_ERR_INVALID_ARG');
    expect(breaker.snapshot().totals.ignored).toBe(1);
    expect(breaker.state).toBe('closed');
    expect(upstream.total()).toBe(0);
    expect(inFlight(breaker)).toBe(0);
  });

  it('a half-open probe that succeeds closes the breaker', async () => {
    const upstream = await server();
    const clock = new ManualClock();
    const breaker = breakerOf(
      { consecutiveFailures: 1, openDurationMs: 1_000, timeoutMs: 500 },
      clock,
    );
    const dispatcher = agentWith({ breaker });

    await (await request(`${upstream.origin}/fail`, { dispatcher })).body.text();
    expect(breaker.state).toBe('open');
    clock.advance(1_000);
    expect(await (await request(`${upstream.origin}/ok`, { dispatcher })).body.text()).toBe('ok');

    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot().totals.probes.succeeded).toBe(1);
    expect(inFlight(breaker)).toBe(0);
  });

  it("a hung half-open probe is aborted at the probe's deadline, and the breaker reopens", async () => {
    const upstream = await server();
    const clock = new ManualClock();
    const breaker = breakerOf(
      { consecutiveFailures: 1, openDurationMs: 1_000, timeoutMs: 500 },
      clock,
    );
    const dispatcher = agentWith({ breaker });

    await (await request(`${upstream.origin}/fail`, { dispatcher })).body.text();
    clock.advance(1_000);
    const probe = request(`${upstream.origin}/hang`, { dispatcher }).catch((e: unknown) => e);
    await upstream.whenRequests(2);
    clock.advance(500);

    expect(await probe).toBeInstanceOf(CallTimeoutError);
    await upstream.whenClosed(1);
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot().totals.probes.failed).toBe(1);
    expect(inFlight(breaker)).toBe(0);
  });

  it('a half-open probe the breaker gives up on (halfOpen.maxWaitMs) is aborted too', async () => {
    const upstream = await server();
    const clock = new ManualClock();
    const breaker = breakerOf(
      {
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        timeoutMs: false,
        halfOpen: { maxWaitMs: 300 },
      },
      clock,
    );
    const dispatcher = agentWith({ breaker });

    await (await request(`${upstream.origin}/fail`, { dispatcher })).body.text();
    clock.advance(1_000);
    const probe = request(`${upstream.origin}/hang`, { dispatcher }).catch((e: unknown) => e);
    await upstream.whenRequests(2);
    clock.advance(300);
    // The breaker gives up on it when the next call asks (no timer of its own): then the probe's request is aborted.
    const next = await request(`${upstream.origin}/ok`, { dispatcher }).catch((e: unknown) => e);

    expect(await probe).toBeInstanceOf(CallTimeoutError);
    await upstream.whenClosed(1);
    expect(next).toBeInstanceOf(CallRejectedError);
    expect(breaker.state).toBe('open');
    expect(inFlight(breaker)).toBe(0);
  });
});

describe('withCircuitBreaker() with what undici composes around it', () => {
  it('a full bulkhead refuses at once, without a connection', async () => {
    const upstream = await server();
    const breaker = new Breaker('upstream', { bulkhead: { maxConcurrent: 1 }, timeoutMs: 500 });
    const dispatcher = agentWith({ breaker });

    const first = request(`${upstream.origin}/hang`, { dispatcher }).catch((e: unknown) => e);
    await upstream.whenRequests(1);
    const refusal = await request(`${upstream.origin}/ok`, { dispatcher }).catch((e: unknown) => e);

    expect((refusal as CallRejectedError).code).toBe('BULKHEAD_FULL');
    expect(upstream.connections.opened).toBe(1);
    expect(upstream.total()).toBe(1);
    breaker.dispose();
    await upstream.close();
    await first;
  });

  // throwOnError: true throws from onResponseEnd to retry; false pauses the response while it decides.
  it.each([true, false])(
    "undici's retry composed outside it (throwOnError: %s): each attempt goes through the breaker, none once it opens",
    async (throwOnError) => {
      const upstream = await server();
      const breaker = breakerOf({ consecutiveFailures: 2, timeoutMs: false });
      const agent = new Agent();
      cleanups.push(() => agent.destroy());
      const dispatcher = agent.compose(
        withCircuitBreaker({ breaker }),
        interceptors.retry({ maxRetries: 5, minTimeout: 1, timeoutFactor: 1, throwOnError }),
      );

      const error = await request(`${upstream.origin}/fail`, { dispatcher }).catch(
        (e: unknown) => e,
      );

      expect(error).toBeInstanceOf(CallRejectedError);
      expect(upstream.total()).toBe(2);
      expect(breaker.snapshot().totals.failures.total).toBe(2);
      expect(breaker.snapshot().totals.rejected.total).toBe(1);
      expect(inFlight(breaker)).toBe(0);
    },
  );
});

describe("withCircuitBreaker() with a handler of undici's older API", () => {
  it('the handler hears every hook undici gives it, onRequestSent and onBodySent included', async () => {
    const upstream = await server();
    const agent = new Agent();
    cleanups.push(() => agent.destroy());
    const dispatcher = withCircuitBreaker(agent, { breaker: breakerOf({ timeoutMs: false }) });
    const heard: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const url = new URL(`${upstream.origin}/ok`);
      dispatcher.dispatch(
        { origin: url.origin, path: url.pathname, method: 'POST', body: 'ping' },
        {
          onConnect: () => heard.push('connect'),
          onBodySent: (chunk: unknown) => heard.push(`body sent ${String(chunk)}`),
          onRequestSent: () => heard.push('request sent'),
          onHeaders: (status: number) => (heard.push(`headers ${status}`), true),
          onData: () => true,
          onComplete: () => (heard.push('complete'), resolve()),
          onError: reject,
        } as unknown as Dispatcher.DispatchHandler,
      );
    });
    expect(heard).toEqual(['connect', 'body sent ping', 'request sent', 'headers 200', 'complete']);
  });
});

describe.each(FORMS)('withCircuitBreaker() options (%s form)', (each) => {
  beforeEach(() => {
    form = each;
  });

  it('skip: the request bypasses the breaker, even an open one, and is not counted', async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: false });
    breaker.isolate();
    const dispatcher = agentWith({ breaker, skip: (req) => req.path === '/ok' });

    expect(await (await request(`${upstream.origin}/ok`, { dispatcher })).body.text()).toBe('ok');
    const refusal = await request(`${upstream.origin}/fail`, { dispatcher }).catch(
      (e: unknown) => e,
    );

    expect(refusal).toBeInstanceOf(CallRejectedError);
    expect(upstream.total()).toBe(1);
    expect(breaker.snapshot().totals.admitted).toBe(0);
  });

  it('key: requests go to the child it names, undefined to the default key', async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: false, perKey: { maxKeys: 10 } });
    const dispatcher = agentWith({
      breaker,
      key: (req) => (req.path.startsWith('/ok') ? 'reads' : undefined),
    });

    await (await request(`${upstream.origin}/ok`, { dispatcher })).body.text();
    await (await request(`${upstream.origin}/fail`, { dispatcher })).body.text();

    expect(new Set([...breaker.children()].map((child) => child.name))).toEqual(
      new Set(['upstream[reads]', 'upstream[…default]']),
    );
  });

  it('origin keys always name the port', async () => {
    const breaker = breakerOf({ timeoutMs: false, perKey: { maxKeys: 10 } });
    breaker.isolate();
    const dispatcher = agentWith({ breaker });

    for (const url of ['http://localhost/x', 'https://localhost/x', 'http://localhost:8080/x'])
      await request(url, { dispatcher }).catch(() => undefined);

    expect(new Set([...breaker.children()].map((child) => child.name))).toEqual(
      new Set([
        'upstream[http://localhost:80]',
        'upstream[https://localhost:443]',
        'upstream[http://localhost:8080]',
      ]),
    );
  });

  it.each([
    [
      undefined,
      'withCircuitBreaker() needs option "breaker", a Breaker, got undefined. Pass one, e.g. withCircuitBreaker({ breaker: registry.get(\'upstream\') }).',
    ],
    [
      { key: 'host' },
      'withCircuitBreaker() for circuit breaker "upstream": option "key" must be a function of the request, got "host". Pass a function, or leave the option out.',
    ],
    [
      { skip: true },
      'withCircuitBreaker() for circuit breaker "upstream": option "skip" must be a function of the request, got true. Pass a function, or leave the option out.',
    ],
    [
      { key: () => 'a' },
      'withCircuitBreaker() option "key" gives a key, but circuit breaker "upstream" is not per-key. Configure perKey: { maxKeys } on it, or remove the key.',
    ],
    [
      { failureBodyLimit: -1 },
      'withCircuitBreaker() for circuit breaker "upstream": option "failureBodyLimit" must be a number of bytes, 0 or more (Infinity allowed), got -1. Pass a size such as 65536, or leave the option out.',
    ],
  ])('%o is refused with a message naming the option', (extra, message) => {
    const breaker = breakerOf({});
    const options = extra === undefined ? undefined : { breaker, ...extra };
    expect(() => withCircuitBreaker(options as never)).toThrow(new TypeError(message));
  });
});
