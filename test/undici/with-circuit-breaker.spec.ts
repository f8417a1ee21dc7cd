import {
  Agent,
  RetryAgent,
  fetch as undiciFetch,
  getGlobalDispatcher,
  request,
  setGlobalDispatcher,
  type Dispatcher,
} from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Breaker,
  CallTimeoutError,
  CallRejectedError,
  type BreakerOptions,
} from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import {
  withCircuitBreaker,
  type UndiciCircuitBreakerOptions,
  type UndiciResponseHead,
} from '../../lib/undici/index.js';
import { startCountingServer, type CountingServer } from './counting-server.js';
import { BREAKER_CHANNEL_NAMES, breakerChannels } from '../../lib/diagnostics/index.js';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

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

function breakerOf(options: BreakerOptions, clock = new ManualClock()): Breaker {
  return new Breaker('upstream', options, { clock });
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

describe.each(FORMS)('withCircuitBreaker() against a real server (%s form)', (each) => {
  beforeEach(() => {
    form = each;
  });

  it('gives a classifier of its own the headers as undici parses them', async () => {
    const upstream = await server();
    const seen: unknown[] = [];
    const breaker = breakerOf({
      timeoutMs: false,
      classifyResult: (result) => {
        const { status, statusText, headers } = result as UndiciResponseHead;
        const { 'x-many': many, 'x-mixed-case': mixed } = { ...headers };
        seen.push([
          status,
          statusText,
          many,
          mixed,
          'date' in headers,
          Object.keys(headers).length,
          // A plain object, as undici's own: its methods, a copy and a clone work as on any object.
          Object.getPrototypeOf(headers) === Object.prototype,
          Object.prototype.hasOwnProperty.call(headers, 'x-many') && headers.hasOwnProperty('date'),
          structuredClone(headers)['x-mixed-case'],
        ]);
        return 'success';
      },
    });
    const response = await request(`${upstream.origin}/headers`, {
      dispatcher: agentWith({ breaker }),
    });
    await response.body.text();
    expect(seen).toEqual([
      [200, 'OK', ['1', '2'], 'Yes', true, Object.keys(response.headers).length, true, true, 'Yes'],
    ]);
  });

  it('refuses without opening a connection when the breaker is open, through request()', async () => {
    const upstream = await server();
    const breaker = breakerOf({ consecutiveFailures: 1, timeoutMs: false });
    const dispatcher = agentWith({ breaker });

    const failed = await request(`${upstream.origin}/fail`, { dispatcher });
    expect(failed.statusCode).toBe(500);
    expect(await failed.body.text()).toBe('down');
    expect(breaker.state).toBe('open');

    const refusal = await request(`${upstream.origin}/ok`, { dispatcher }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(CallRejectedError);
    expect((refusal as CallRejectedError).breakerName).toBe('upstream');
    expect(upstream.requests.get('/ok')).toBeUndefined();
    expect(upstream.total()).toBe(1);
    expect(upstream.connections.opened).toBe(1);
    expect(breaker.snapshot().totals.rejected.total).toBe(1);
  });

  it('refuses through undici fetch: the breaker error is the cause, nothing reaches the server', async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: false });
    breaker.isolate();
    const dispatcher = agentWith({ breaker });

    const error = await undiciFetch(`${upstream.origin}/ok`, { dispatcher }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).cause).toBeInstanceOf(CallRejectedError);
    expect(upstream.connections.opened).toBe(0);
    expect(upstream.total()).toBe(0);
    expect(breaker.snapshot().totals.rejected.total).toBe(1);
  });

  it("Node's global fetch goes through it, with the dispatcher option and with setGlobalDispatcher()", async () => {
    const upstream = await server();
    const breaker = breakerOf({ consecutiveFailures: 1, timeoutMs: false });
    const dispatcher = agentWith({ breaker });

    const failed = await fetch(`${upstream.origin}/fail`, { dispatcher } as RequestInit);
    expect(failed.status).toBe(500);
    expect(await failed.text()).toBe('down');
    expect(breaker.snapshot().totals.failures.total).toBe(1);
    expect(breaker.state).toBe('open');

    const previous = getGlobalDispatcher();
    setGlobalDispatcher(dispatcher);
    cleanups.push(() => setGlobalDispatcher(previous));
    const error = await fetch(`${upstream.origin}/ok`).catch((e: unknown) => e);
    expect((error as TypeError).cause).toBeInstanceOf(CallRejectedError);
    expect(breaker.snapshot().totals.rejected.total).toBe(1);
    expect(upstream.requests.get('/ok')).toBeUndefined();
    expect(upstream.connections.opened).toBe(1);
  });

  it("aborts a hung request at the breaker's deadline: the server sees its socket closed", async () => {
    const upstream = await server();
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 500 }, clock);
    const dispatcher = agentWith({ breaker });

    const pending = request(`${upstream.origin}/hang`, { dispatcher }).catch((e: unknown) => e);
    await upstream.whenRequests(1);
    clock.advance(499);
    expect(upstream.connections.closed).toBe(0);
    clock.advance(1);

    const error = await pending;
    expect(error).toBeInstanceOf(CallTimeoutError);
    await upstream.whenClosed(1);
    // (undici then opens a spare connection, as it does after any aborted request: nothing is sent on it.)
    expect(upstream.total()).toBe(1);
    const { totals } = breaker.snapshot();
    expect(totals.timeouts).toBe(1);
    expect(totals.failures.total).toBe(1);
  });

  it("timeoutMs(request): a request's own deadline replaces the breaker's", async () => {
    const upstream = await server();
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 500 }, clock);
    const dispatcher = agentWith({
      breaker,
      timeoutMs: (dispatched) => (dispatched.path.startsWith('/hang?long') ? 5_000 : undefined),
    });
    const pending = request(`${upstream.origin}/hang?long`, { dispatcher }).catch(
      (e: unknown) => e,
    );
    await upstream.whenRequests(1);
    clock.advance(4_999);
    expect(upstream.connections.closed).toBe(0);
    clock.advance(1);
    expect(await pending).toEqual(new CallTimeoutError('upstream', 5_000));
    await upstream.whenClosed(1);
    expect(breaker.snapshot().totals.timeouts).toBe(1);
  });

  it('a request deadline the breaker refuses errors the request, which is not sent', async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: 500 });
    const dispatcher = agentWith({ breaker, timeoutMs: () => false });
    const error = await request(`${upstream.origin}/ok`, { dispatcher }).catch((e: unknown) => e);
    expect(error).toEqual(
      new TypeError(
        'Circuit breaker "upstream": acquire() option "timeoutMs" is false, but the breaker has a deadline of 500 ms, which one call may change but not remove. Pass a longer deadline for this call, or build the breaker with timeoutMs: false.',
      ),
    );
    expect(upstream.total()).toBe(0);
    expect(breaker.snapshot().totals.admitted).toBe(0);
  });

  it('each request is on the call channels: call-start, then call-settle with the response head', async () => {
    const upstream = await server();
    const seen: [string, Record<string, unknown>][] = [];
    const onStart = (m: unknown) => seen.push(['start', { ...(m as object) }]);
    const onSettle = (m: unknown) => seen.push(['settle', { ...(m as object) }]);
    subscribe(BREAKER_CHANNEL_NAMES.callStart, onStart);
    subscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle);
    cleanups.push(() => {
      unsubscribe(BREAKER_CHANNEL_NAMES.callStart, onStart);
      unsubscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle);
    });
    const breaker = new Breaker(
      'traced',
      { timeoutMs: false },
      { clock: new ManualClock(), channels: breakerChannels() },
    );
    const response = await request(`${upstream.origin}/ok`, { dispatcher: agentWith({ breaker }) });
    await response.body.dump();
    expect(seen).toEqual([
      ['start', { breaker: 'traced' }],
      ['settle', { breaker: 'traced', result: expect.objectContaining({ status: 200 }) }],
    ]);
  });

  it('a success head a subscriber of settled calls may keep holds parsed headers, not the raw ones', async () => {
    const upstream = await server();
    const heads: { headers: Record<string, unknown> }[] = [];
    const onSettle = (m: unknown) =>
      heads.push((m as { result: { headers: Record<string, unknown> } }).result);
    subscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle);
    cleanups.push(() => unsubscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle));
    const breaker = new Breaker(
      'kept',
      { timeoutMs: false },
      { clock: new ManualClock(), channels: breakerChannels() },
    );
    const response = await request(`${upstream.origin}/ok`, { dispatcher: agentWith({ breaker }) });
    await response.body.dump();
    expect(heads).toHaveLength(1);
    // undici's raw header buffers are views of the socket's data: a kept head must not hold them.
    expect(
      Object.values(heads[0]!).filter((v) => Array.isArray(v) && Buffer.isBuffer(v[0])),
    ).toEqual([]);
    expect(heads[0]!.headers['content-length']).toBe('2');
  });

  it("aborts a hung fetch at the deadline: fetch rejects with the breaker's timeout as cause", async () => {
    const upstream = await server();
    const clock = new ManualClock();
    const breaker = breakerOf({ timeoutMs: 500 }, clock);
    const dispatcher = agentWith({ breaker });

    const pending = fetch(`${upstream.origin}/hang`, { dispatcher } as RequestInit).catch(
      (e: unknown) => e,
    );
    await upstream.whenRequests(1);
    clock.advance(500);

    expect(((await pending) as TypeError).cause).toBeInstanceOf(CallTimeoutError);
    await upstream.whenClosed(1);
    expect(breaker.snapshot().totals.timeouts).toBe(1);
  });

  it("the caller's own abort is ignored by the breaker, and the socket is closed", async () => {
    const upstream = await server();
    const breaker = breakerOf({ consecutiveFailures: 1, timeoutMs: 500 });
    const dispatcher = agentWith({ breaker });
    const caller = new AbortController();
    const heard: unknown[] = [];
    breaker.on('ignored', ({ error }) => heard.push(error));

    const pending = request(`${upstream.origin}/hang`, { dispatcher, signal: caller.signal }).catch(
      (e: unknown) => e,
    );
    await upstream.whenRequests(1);
    const reason = new Error('caller left');
    caller.abort(reason);

    expect(((await pending) as Error).message).toBe('caller left');
    // The ignored event says why, as it does for axios and execute().
    expect(heard).toEqual([reason]);
    await upstream.whenClosed(1);
    const { totals } = breaker.snapshot();
    expect(totals.ignored).toBe(1);
    expect(totals.failures.total).toBe(0);
    expect(breaker.state).toBe('closed');
  });

  it('a fetch aborted by its caller is ignored too', async () => {
    const upstream = await server();
    const breaker = breakerOf({ consecutiveFailures: 1, timeoutMs: 500 });
    const dispatcher = agentWith({ breaker });
    const caller = new AbortController();

    const pending = fetch(`${upstream.origin}/hang`, {
      dispatcher,
      signal: caller.signal,
    } as RequestInit).catch((e: unknown) => e);
    await upstream.whenRequests(1);
    caller.abort();

    expect(((await pending) as Error).name).toBe('AbortError');
    await upstream.whenClosed(1);
    expect(breaker.snapshot().totals.ignored).toBe(1);
    expect(breaker.state).toBe('closed');
  });

  it.each([
    ['retry-after', '3', 3_000],
    ['retry-after-ms', '1500', 1_500],
    ['x-ms-retry-after-ms', '2500', 2_500],
  ])('a 429 with %s: %s pauses the breaker for %i ms', async (header, value, pauseMs) => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: false });
    const dispatcher = agentWith({ breaker });

    const answer = await request(`${upstream.origin}/429?h=${header}&v=${value}`, { dispatcher });
    expect(answer.statusCode).toBe(429);
    expect(await answer.body.text()).toBe('slow down');
    expect(breaker.snapshot().totals.overloads).toBe(1);
    expect(breaker.snapshot().retryAfterMs).toBe(pauseMs);

    const refusal = await request(`${upstream.origin}/ok`, { dispatcher }).catch((e: unknown) => e);
    expect((refusal as CallRejectedError).retryAfterMs).toBe(pauseMs);
    expect(upstream.requests.get('/ok')).toBeUndefined();
  });

  it('a per-origin family opens each origin on its own', async () => {
    const a = await server();
    const b = await server();
    const breaker = breakerOf({
      consecutiveFailures: 1,
      timeoutMs: false,
      perKey: { maxKeys: 10 },
    });
    const dispatcher = agentWith({ breaker });

    expect((await request(`${a.origin}/fail`, { dispatcher })).statusCode).toBe(500);
    expect(breaker.forKey(a.origin).state).toBe('open');
    expect(breaker.forKey(b.origin).state).toBe('closed');

    const refusal = await request(`${a.origin}/ok`, { dispatcher }).catch((e: unknown) => e);
    expect((refusal as CallRejectedError).breakerName).toBe(`upstream[${a.origin}]`);
    const fine = await request(`${b.origin}/ok`, { dispatcher });
    expect(await fine.body.text()).toBe('ok');
    expect((await request(`${b.origin}/fail`, { dispatcher })).statusCode).toBe(500);
    expect(breaker.forKey(b.origin).state).toBe('open');

    expect(a.total()).toBe(1);
    expect(b.total()).toBe(2);
    expect(new Set([...breaker.children()].map((child) => child.name))).toEqual(
      new Set([`upstream[${a.origin}]`, `upstream[${b.origin}]`]),
    );
  });

  it('an unread failure body is read for the caller, so its connection is reused', async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: false });
    const dispatcher = agentWith({ breaker, failureBodyLimit: 4 << 20 }, { connections: 1 });

    const failed = await fetch(`${upstream.origin}/big-fail?bytes=${1 << 20}`, {
      dispatcher,
    } as RequestInit);
    expect(failed.status).toBe(500);
    // Its body is never read; the next request gets the one connection.
    const next = await fetch(`${upstream.origin}/ok`, { dispatcher } as RequestInit);
    expect(await next.text()).toBe('ok');
    expect(upstream.connections.opened).toBe(1);
    expect(upstream.total()).toBe(2);
    // The caller could still read the body in full.
    expect((await failed.arrayBuffer()).byteLength).toBe(1 << 20);
  });

  it('a failure body past failureBodyLimit aborts the request and closes the connection', async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: false });
    const dispatcher = agentWith({ breaker, failureBodyLimit: 1024 });

    const failed = await request(`${upstream.origin}/big-fail?bytes=${1 << 20}`, { dispatcher });
    expect(failed.statusCode).toBe(500);
    const error = await failed.body.text().catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'Circuit breaker "upstream" counted this response as a failure and read its body for the caller so as not to hold the connection, but the body passed 1024 bytes ("failureBodyLimit"), so the request was aborted. Raise failureBodyLimit if such bodies must reach the caller whole.',
    );
    await upstream.whenClosed(1);
    expect(breaker.snapshot().totals.failures.total).toBe(1);
  });
});

describe('withCircuitBreaker(agent, options), the dispatcher form', () => {
  it("is the agent's dispatcher otherwise: compose(), close() and its state are the agent's", async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: false });
    const agent = new Agent();
    const dispatcher = withCircuitBreaker(agent, { breaker });
    const seen: string[] = [];
    const composed = dispatcher.compose((dispatch) => (options, handler) => {
      seen.push(options.path);
      return dispatch(options, handler);
    });

    const response = await request(`${upstream.origin}/ok`, { dispatcher: composed });
    expect([response.statusCode, await response.body.text(), seen]).toEqual([200, 'ok', ['/ok']]);
    const viaMethod = await dispatcher.request({
      origin: upstream.origin,
      path: '/fail',
      method: 'GET',
    });
    expect([viaMethod.statusCode, await viaMethod.body.text()]).toEqual([500, 'down']);
    expect(breaker.snapshot().totals).toMatchObject({ successes: 1, failures: { total: 1 } });

    await dispatcher.close();
    expect([agent.closed, dispatcher.closed]).toEqual([true, true]);
  });

  it('closes a dispatcher with private fields (a RetryAgent), and its requests still pass the breaker', async () => {
    const upstream = await server();
    const breaker = breakerOf({ timeoutMs: false });
    const retrying = new RetryAgent(new Agent(), { maxRetries: 0 });
    const dispatcher = withCircuitBreaker(retrying, { breaker });
    const response = await request(`${upstream.origin}/ok`, { dispatcher });
    const viaMethod = await dispatcher.request({
      origin: upstream.origin,
      path: '/ok',
      method: 'GET',
    });
    expect([await response.body.text(), await viaMethod.body.text()]).toEqual(['ok', 'ok']);
    expect(breaker.snapshot().totals.successes).toBe(2);
    // Run on the proxy, RetryAgent's close() read its #agent from the wrong object and threw.
    await dispatcher.close();
    expect(dispatcher.close).toBe(dispatcher.close);
  });

  it('refuses what is not a dispatcher, naming what it got', () => {
    const breaker = breakerOf({});
    expect(() => withCircuitBreaker({} as Agent, { breaker })).toThrow(
      'withCircuitBreaker() takes an undici dispatcher (an Agent, a Pool...) and the options, got an object as the dispatcher. Pass one, e.g. withCircuitBreaker(new Agent(), { breaker }), or only the options for compose().',
    );
  });
});
